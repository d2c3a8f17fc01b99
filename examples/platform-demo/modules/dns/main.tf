terraform {
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.0"
    }
  }
}

resource "aws_route53_zone" "internal" {
  name = "internal.example"
}

resource "cloudflare_record" "public" {
  zone_id = "0123456789abcdef"
  name    = "www"
  type    = "CNAME"
  content = "example.net"
}
