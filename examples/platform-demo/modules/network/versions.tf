terraform {
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = "~> 5.0"
    }
  }
}

# A shared module must not configure providers: the caller passes them in.
provider "aws" {
  region = "us-east-1"
}
