terraform {
  backend "s3" {
    bucket = "acme-terraform-state"
    key    = "prod/network.tfstate"
    region = "eu-west-2"
  }

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = "~> 5.40"
    }
    random = {
      source  = "hashicorp/random"
      version = ">= 3.5.0"
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
  cidr   = "10.10.0.0/16"

  providers = {
    aws      = aws
    aws.peer = aws.peer
  }
}

module "eks" {
  source = "terraform-aws-modules/eks/aws"

  cluster_name = "prod"
}

resource "random_pet" "suffix" {}
