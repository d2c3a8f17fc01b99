variable "cidr" {
  type = string
}

resource "aws_vpc" "this" {
  cidr_block = var.cidr
}

resource "aws_vpc_peering_connection" "peer" {
  provider    = aws.peer
  vpc_id      = aws_vpc.this.id
  peer_vpc_id = "vpc-0123456789abcdef0"
}

module "dns" {
  source = "../dns"
}
