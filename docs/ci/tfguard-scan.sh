#!/usr/bin/env bash
# Scans a Terraform/OpenTofu configuration archive with the tfguard API and gates on the verdict.
#
#   tfguard-scan.sh <archive.tar.gz|.tgz|.tar|.zip>
#
# Environment:
#   TFGUARD_API            base URL of the HTTP API (the stack's HttpApiUrl output)
#   TFGUARD_REPOSITORY     repository name (for example $GITHUB_REPOSITORY or $CI_PROJECT_PATH)
#   TFGUARD_FAIL_ON        error (default) | warning | notice | never
#   TFGUARD_MAX_POST_BYTES archives up to this size are posted directly (default 4500000); larger
#                          ones go through POST /uploads and a presigned PUT
#   TFGUARD_WAIT_SECONDS   how long to wait for an uploaded archive's report (default 300)
#   TFGUARD_POLL_SECONDS   pause between polls while the report is pending (default 5)
#   AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN
#                          credentials allowed to execute-api:Invoke the API (requests are SigV4-signed
#                          by curl >= 7.75)
#
# Writes tfguard.json (the API's JSON answer: scanId, verdict, report), tfguard.sarif and tfguard.md.
# Exit status: 0 pass, 1 fail (findings at or above TFGUARD_FAIL_ON), 2 the scan could not be done.
set -euo pipefail

die() {
  echo "tfguard: $*" >&2
  exit 2
}

[ $# -eq 1 ] || die "usage: tfguard-scan.sh <archive>"
archive=$1
[ -n "${TFGUARD_API:-}" ] || die "TFGUARD_API is not set"
[ -n "${TFGUARD_REPOSITORY:-}" ] || die "TFGUARD_REPOSITORY is not set"
[ -n "${AWS_REGION:-}" ] || die "AWS_REGION is not set"
[ -n "${AWS_ACCESS_KEY_ID:-}" ] && [ -n "${AWS_SECRET_ACCESS_KEY:-}" ] || die "AWS credentials are not set"
api=${TFGUARD_API%/}
repository=$TFGUARD_REPOSITORY
fail_on=${TFGUARD_FAIL_ON:-error}
max_post=${TFGUARD_MAX_POST_BYTES:-4500000}
wait_seconds=${TFGUARD_WAIT_SECONDS:-300}
poll_seconds=${TFGUARD_POLL_SECONDS:-5}

response=$(mktemp)
trap 'rm -f "$response"' EXIT

uri() { jq -rn --arg v "$1" '$v | @uri'; }

# signed METHOD URL [curl options...]: the response body goes to $response, the status to stdout.
signed() {
  local method=$1 url=$2
  shift 2
  local token=()
  if [ -n "${AWS_SESSION_TOKEN:-}" ]; then token=(-H "x-amz-security-token: ${AWS_SESSION_TOKEN}"); fi
  curl -sS -o "$response" -w '%{http_code}' -X "$method" \
    --aws-sigv4 "aws:amz:${AWS_REGION}:execute-api" --user "${AWS_ACCESS_KEY_ID}:${AWS_SECRET_ACCESS_KEY}" \
    ${token[@]+"${token[@]}"} "$@" "$url" || true
}

explain() { # status → message on stderr
  [ "$1" != 000 ] || die "cannot reach $api"
  local message
  message=$(jq -r '(.message // empty) + (if .code then " (" + .code + ")" else "" end)' "$response" 2>/dev/null || true)
  die "HTTP $1 ${message:-$(head -c 300 "$response")}"
}

case "$archive" in
  *.zip) type=application/zip ;;
  *.tar) type=application/x-tar ;;
  *) type=application/gzip ;;
esac
[ -f "$archive" ] || die "no such archive: $archive"
size=$(wc -c <"$archive" | tr -d ' ')
query="repository=$(uri "$repository")&failOn=$(uri "$fail_on")"

if [ "$size" -le "$max_post" ]; then
  status=$(signed POST "$api/scans?$query&format=json" -H "content-type: $type" --data-binary "@$archive")
  [ "$status" = 200 ] || explain "$status"
  cp "$response" tfguard.json
else
  body=$(jq -n --arg r "$repository" --arg f "$fail_on" --arg x "${archive##*.}" \
    '{repository: $r, failOn: $f, format: (if $x == "gz" then "tar.gz" else $x end)}')
  status=$(signed POST "$api/uploads" -H 'content-type: application/json' --data "$body")
  [ "$status" = 201 ] || explain "$status"
  id=$(jq -r .id "$response")
  url=$(jq -r .upload.url "$response")
  curl -sS --fail -X PUT --upload-file "$archive" "$url" >/dev/null || die "the upload of $archive failed"
  deadline=$((SECONDS + wait_seconds))
  while :; do
    status=$(signed GET "$api/scans/$id?$query&format=json" -H 'accept: application/json')
    [ "$status" = 200 ] && break
    [ "$status" = 202 ] || explain "$status"
    [ "$SECONDS" -lt "$deadline" ] || die "no report for upload $id after ${wait_seconds}s"
    sleep "$poll_seconds"
  done
  cp "$response" tfguard.json
fi

scan_id=$(jq -r .scanId tfguard.json)
verdict=$(jq -r .verdict tfguard.json)
status=$(signed GET "$api/scans/$scan_id?$query&format=sarif")
[ "$status" = 200 ] || explain "$status"
cp "$response" tfguard.sarif
status=$(signed GET "$api/scans/$scan_id?$query&format=markdown")
[ "$status" = 200 ] || explain "$status"
cp "$response" tfguard.md

jq -r '"tfguard: \(.report.summary.error) errors, \(.report.summary.warning) warnings, \(.report.summary.notice) notices; verdict \(.verdict) (fail on \(.failOn)), scan \(.scanId)"' tfguard.json
[ "$verdict" = pass ] || exit 1
