terraform {
  required_version = ">= 1.6"

  backend "s3" {
    bucket = "acme-terraform-state"
    key    = "staging/network.tfstate"
    region = "eu-west-2"
  }

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = "~> 4.67"
    }
  }
}

provider "aws" {
  region = "eu-west-2"
}

provider "aws" {
  alias  = "peer"
  region = "eu-west-1"
}

module "network" {
  source = "../../modules/network"
  cidr   = "10.20.0.0/16"

  providers = {
    aws      = aws
    aws.peer = aws.peer
  }
}
