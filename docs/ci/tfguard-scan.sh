#!/usr/bin/env bash
# Scans a Terraform/OpenTofu configuration archive with the tfguard API and gates on the verdict.
#
#   tfguard-scan.sh <archive.tar.gz|.tgz|.tar|.zip>
#
# Self-contained: copy it into your repository, take it from the npm package
# (package/docs/ci/tfguard-scan.sh in tfguard-<version>.tgz), or use the GitHub Action (action.yml at
# the root of the tfguard repository), which runs it.
#
# Environment:
#   TFGUARD_API            base URL of the HTTP API (the stack's HttpApiUrl output)
#   TFGUARD_REPOSITORY     repository name (for example $GITHUB_REPOSITORY or $CI_PROJECT_PATH)
#   TFGUARD_FAIL_ON        error (default) | warning | notice | never
#   TFGUARD_FIX            true: also ask for the patch of every safe fix (POST /scans?fix=true, the
#                          diff `tfguard fix --dry-run` prints) and write it to tfguard.patch; an archive
#                          that goes through POST /uploads gets no patch (a notice says so)
#   TFGUARD_MAX_POST_BYTES archives up to this size are posted to POST /scans (default 4500000); larger
#                          ones, and any that POST /scans answers 413 (too large) or 504 (the scan did
#                          not finish in the API's time), go through POST /uploads and the returned
#                          presigned POST (form fields bound to the size limit, content type and
#                          repository; the presigned PUT only from an API that offers no POST), then
#                          GET /scans/{id}
#   TFGUARD_WAIT_SECONDS   how long to wait for an uploaded archive's report (default 300)
#   TFGUARD_POLL_SECONDS   pause between polls while the report is pending (default 5)
#   TFGUARD_RETRIES        attempts per API request on network failures, 429 and 5xx (default 4; a 504
#                          of POST /scans is not retried but uploaded)
#   TFGUARD_RETRY_SECONDS  pause before the first retry, doubled before each next one (default 2)
#   AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN
#                          credentials allowed to execute-api:Invoke the API
#
# Requests are SigV4-signed by curl (>= 7.75, --aws-sigv4). SigV4 signs the query string in canonical
# order (names sorted, names and values percent-encoded except A-Z a-z 0-9 - _ . ~); curl 7 signs it
# as written (curl issue #9717), so API Gateway would answer 403 to any other order. Every query
# below is therefore built in canonical order by `query`.
#
# Writes tfguard.json (the API's JSON answer: scanId, verdict, report), tfguard.sarif and tfguard.md
# (and tfguard.patch with TFGUARD_FIX=true). A SARIF or Markdown report too large for an API response
# (over 4,000,000 bytes) is answered with 303 See Other: it is downloaded from that presigned link.
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
case "$(curl --help all 2>/dev/null || true)" in
  *--aws-sigv4*) ;;
  *) die "curl >= 7.75 (with --aws-sigv4) is needed" ;;
esac
jq -n --args '$ARGS.positional' >/dev/null 2>&1 || die "jq >= 1.6 is needed"
api=${TFGUARD_API%/}
repository=$TFGUARD_REPOSITORY
fail_on=${TFGUARD_FAIL_ON:-error}
max_post=${TFGUARD_MAX_POST_BYTES:-4500000}
wait_seconds=${TFGUARD_WAIT_SECONDS:-300}
poll_seconds=${TFGUARD_POLL_SECONDS:-5}
retries=${TFGUARD_RETRIES:-4}
retry_seconds=${TFGUARD_RETRY_SECONDS:-2}
fix=${TFGUARD_FIX:-false}
case $fix in true | false) ;; *) die "TFGUARD_FIX must be true or false, not $fix" ;; esac

response=$(mktemp)
headers=$(mktemp)
errors=$(mktemp)
trap 'rm -f "$response" "$headers" "$errors"' EXIT

# query NAME VALUE [NAME VALUE ...]: the SigV4 canonical query string. jq's @uri leaves !*'() alone
# before jq 1.7, so those are encoded here too.
query() {
  jq -rn --arg apos "'" '
    def enc: @uri | gsub("!"; "%21") | gsub("\\*"; "%2A") | gsub($apos; "%27") | gsub("\\("; "%28")
      | gsub("\\)"; "%29");
    $ARGS.positional as $a
    | [range(0; $a | length; 2) | {name: ($a[.] | enc), value: ($a[. + 1] | enc)}]
    | sort_by(.name, .value) | map("\(.name)=\(.value)") | join("&")' --args "$@"
}

token=()
if [ -n "${AWS_SESSION_TOKEN:-}" ]; then token=(-H "x-amz-security-token: ${AWS_SESSION_TOKEN}"); fi

# The API's message for the response in $response: `message (code)`, else its first 300 bytes.
message() {
  local text
  text=$(jq -r '(.message // empty) + ((.code // .error) as $c | if $c then " (\($c))" else "" end)' \
    "$response" 2>/dev/null || true)
  printf '%s' "${text:-$(head -c 300 "$response")}"
}

curl_error() { head -n 1 "$errors" | head -c 300; }

# call METHOD URL [curl options...]: a signed request; the body goes to $response, the headers to
# $headers, the status to stdout (000: no answer, curl's message in $errors). Network failures, 429
# and 5xx are retried with exponential backoff, except the statuses listed in $no_retry, which the
# caller handles.
call() {
  local method=$1 url=$2 status attempt=1 pause=$retry_seconds what path
  shift 2
  path=${url#"$api"}
  path=${path%%\?*}
  while :; do
    status=$(curl -sS -o "$response" -D "$headers" -w '%{http_code}' -X "$method" \
      --aws-sigv4 "aws:amz:${AWS_REGION}:execute-api" --user "${AWS_ACCESS_KEY_ID}:${AWS_SECRET_ACCESS_KEY}" \
      ${token[@]+"${token[@]}"} "$@" "$url" 2>"$errors") || true
    case " ${no_retry:-} " in *" $status "*) break ;; esac
    case $status in 000 | 429 | 500 | 502 | 503 | 504) ;; *) break ;; esac
    [ "$attempt" -lt "$retries" ] || break
    if [ "$status" = 000 ]; then what=": no answer ($(curl_error))"; else what=" answered $status ($(message))"; fi
    echo "tfguard: $method $path${what}; retry $attempt of $((retries - 1)) in ${pause}s" >&2
    sleep "$pause"
    pause=$(awk -v p="$pause" 'BEGIN { print p * 2 }')
    attempt=$((attempt + 1))
  done
  printf '%s' "$status"
}

explain() { # status → message on stderr, exit 2
  [ "$1" != 000 ] || die "cannot reach $api: $(curl_error)"
  die "HTTP $1 $(message)"
}

case "$archive" in
  *.zip) type=application/zip ;;
  *.tar) type=application/x-tar ;;
  *) type=application/gzip ;;
esac
[ -f "$archive" ] || die "no such archive: $archive"
size=$(wc -c <"$archive" | tr -d ' ')

# POST /uploads, the presigned upload, then GET /scans/{id} until the report is there.
upload_and_wait() {
  local body status id method url fields max_bytes deadline form=() name value
  body=$(jq -n --arg r "$repository" --arg f "$fail_on" --arg x "${archive##*.}" \
    '{repository: $r, failOn: $f, format: (if $x == "gz" then "tar.gz" else $x end)}')
  status=$(call POST "$api/uploads" -H 'content-type: application/json' --data "$body")
  [ "$status" = 201 ] || explain "$status"
  id=$(jq -r .id "$response")
  # The presigned POST (`post`) binds the size limit, the content type and the repository, so the
  # store itself refuses anything else; `upload` (a PUT, or a POST from earlier APIs) only when the
  # API offers no `post`.
  if jq -e '.post.url | type == "string"' "$response" >/dev/null; then
    method=POST
    url=$(jq -r .post.url "$response")
    fields=.post.fields
    max_bytes=$(jq -r '.post.maxBytes // empty' "$response")
    if [ -n "$max_bytes" ] && [ "$size" -gt "$max_bytes" ]; then
      die "$archive is $size bytes; the service accepts archives of at most $max_bytes bytes"
    fi
  else
    method=$(jq -r '.upload.method // "PUT"' "$response")
    url=$(jq -r .upload.url "$response")
    fields=.upload.fields
  fi
  if [ "$method" = POST ]; then
    # A presigned POST: the policy's fields as literal strings (--form-string: no @file or <file
    # interpretation), the file last.
    while IFS= read -r -d '' name && IFS= read -r -d '' value; do
      form+=(--form-string "$name=$value")
    done < <(jq -j "$fields"' // {} | to_entries[] | "\(.key)\u0000\(.value)\u0000"' "$response")
    curl -sS --fail --retry "$((retries - 1))" -o /dev/null ${form[@]+"${form[@]}"} \
      -F "file=@$archive;type=$type" "$url" 2>"$errors" ||
      die "the upload of $archive failed: $(curl_error)"
  else
    curl -sS --fail --retry "$((retries - 1))" -o /dev/null -X PUT --upload-file "$archive" "$url" 2>"$errors" ||
      die "the upload of $archive failed: $(curl_error)"
  fi
  deadline=$((SECONDS + wait_seconds))
  while :; do
    status=$(call GET "$api/scans/$id?$(query failOn "$fail_on" format json)" -H 'accept: application/json')
    [ "$status" = 200 ] && break
    [ "$status" = 202 ] || explain "$status"
    [ "$SECONDS" -lt "$deadline" ] || die "no report for upload $id after ${wait_seconds}s"
    sleep "$poll_seconds"
  done
  cp "$response" tfguard.json
}

if [ "$size" -le "$max_post" ]; then
  params=(failOn "$fail_on" format json repository "$repository")
  [ "$fix" = false ] || params+=(fix true)
  status=$(no_retry=504 call POST "$api/scans?$(query "${params[@]}")" \
    -H "content-type: $type" --data-binary "@$archive")
  case $status in
    200) cp "$response" tfguard.json ;;
    413 | 504)
      echo "tfguard: POST /scans answered $status ($(message)); uploading it instead" >&2
      upload_and_wait
      ;;
    *) explain "$status" ;;
  esac
else
  upload_and_wait
fi

scan_id=$(jq -r .scanId tfguard.json)
verdict=$(jq -r .verdict tfguard.json)
# rendering FORMAT FILE: GET /scans/{id} in that format into FILE. A rendering too large for a
# response is a 303 to its presigned link (location header, or reportUrls in the body), fetched
# without the API's signature.
rendering() {
  local status link
  status=$(call GET "$api/scans/$scan_id?$(query failOn "$fail_on" format "$1")")
  case $status in
    200) cp "$response" "$2" ;;
    303)
      link=$(sed -n 's/^[Ll][Oo][Cc][Aa][Tt][Ii][Oo][Nn]:[[:space:]]*//p' "$headers" | tr -d '\r' | tail -n 1)
      [ -n "$link" ] || link=$(jq -r --arg f "$1" '.reportUrls[$f] // empty' "$response" 2>/dev/null || true)
      [ -n "$link" ] || die "GET /scans/$scan_id answered 303 for the $1 report without a link"
      curl -sS --fail --retry "$((retries - 1))" -o "$2" "$link" 2>"$errors" ||
        die "the download of the $1 report failed: $(curl_error)"
      ;;
    *) explain "$status" ;;
  esac
}
rendering sarif tfguard.sarif
rendering markdown tfguard.md
rm -f tfguard.patch
if [ "$fix" = true ]; then
  if jq -e '.patch | type == "string"' tfguard.json >/dev/null; then
    jq -j .patch tfguard.json >tfguard.patch
  elif url=$(jq -re '.reportUrls.patch // empty' tfguard.json); then
    # Too large to inline: the stored copy, by its presigned link.
    curl -sS --fail --retry "$((retries - 1))" -o tfguard.patch "$url" 2>"$errors" ||
      die "the download of the patch failed: $(curl_error)"
  else
    echo "tfguard: no patch: the archive was scanned through POST /uploads, which does not fix; run tfguard fix --dry-run" >&2
  fi
fi

jq -r 'def count($n; $word): "\($n) \($word)\(if $n == 1 then "" else "s" end)";
  (.summary // .report.summary) as $s
  | "tfguard: \(count($s.error; "error")), \(count($s.warning; "warning")), \(count($s.notice; "notice")); verdict \(.verdict) (fail on \(.failOn)), scan \(.scanId)"' tfguard.json
[ "$verdict" = pass ] || exit 1
