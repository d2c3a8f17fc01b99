# This file is maintained automatically by "terraform init".
# Manual edits may be lost in future updates.

provider "registry.terraform.io/hashicorp/aws" {
  version     = "5.40.0"
  constraints = ">= 5.0.0, ~> 5.40"
  hashes = [
    "h1:KEqMoJwLw6Z9bTO4K8nPVvQQa6w9Wxb5m3D6cZ1cx4o=",
    "zh:0c3b6e8d8a5a9d0d1d4c8a6a3c1d0f5e2b7a9c4d6e8f0a1b2c3d4e5f6a7b8c9d",
  ]
}

provider "registry.terraform.io/hashicorp/random" {
  version     = "3.6.0"
  constraints = ">= 3.5.0"
  hashes = [
    "h1:R5Ucn26riKIEijcsiOMBR3uOAjuOMfI1x7XvH4P6B1w=",
  ]
}
