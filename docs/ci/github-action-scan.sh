#!/usr/bin/env bash
# The scan step of the tfguard GitHub Action (action.yml), run in the workspace. Its inputs come as
# environment variables (set by the step from the action's inputs). Writes tfguard.json and the
# reports asked for, sets the step outputs (verdict, counts, report paths) and appends the Markdown
# report to the job summary. Exit 0 when a report was made (the verdict fails the job later, after
# the SARIF upload and the comments), 2 when not.
#
# In the runner (no TFGUARD_API): the CLI of the action's own checkout, `node
# "$GITHUB_ACTION_PATH/bin/tfguard.js"` (Node.js 20+), offline; one run per report format (a scan of
# a large repository takes about a second). With TFGUARD_API: the checked-out HEAD (or
# INPUT_ARCHIVE) through the API with tfguard-scan.sh.
set -uo pipefail

fail() {
  echo "::error title=tfguard::$1"
  exit 2
}

# "a, b ,c" → one word per item.
items() { tr ',' '\n' <<<"$1" | tr -d '[:blank:]' | grep -v '^$' || true; }

# The policy file is read by the CLI in the runner; an API scan is judged by the service's own policy.
[ -z "${INPUT_POLICY:-}" ] || [ -z "${TFGUARD_API:-}" ] ||
  fail "the policy input applies to scans in the runner; with api-url the service applies its own policy (TFGUARD_POLICY_OBJECT, docs/policy.md): remove it from the step"
case "${INPUT_MIN_SEVERITY:-notice}" in
  error | warning | notice) ;;
  *) fail "min-severity must be error, warning or notice, got '$INPUT_MIN_SEVERITY'" ;;
esac
case "${TFGUARD_FAIL_ON:-error}" in
  error | warning | notice | never) ;;
  *) fail "fail-on must be error, warning, notice or never, got '$TFGUARD_FAIL_ON'" ;;
esac
levels=()
for s in $(items "${INPUT_SARIF_SEVERITIES:-error,warning}"); do
  case $s in
    error | warning) levels+=("$s") ;;
    notice) levels+=(note) ;;
    *) fail "sarif-severities takes error, warning and notice, got '$s'" ;;
  esac
done
formats=(markdown)
for f in $(items "${INPUT_FORMATS:-sarif,markdown}"); do
  case $f in
    json | markdown) ;;
    sarif | text | codequality) formats+=("$f") ;;
    *) fail "formats takes sarif, markdown, text, codequality and json, got '$f'" ;;
  esac
done
if [ "${INPUT_SARIF_UPLOAD:-true}" = true ] && [[ " ${formats[*]} " != *" sarif "* ]]; then formats+=(sarif); fi

declare -A file=([json]=tfguard.json [sarif]=tfguard.sarif [markdown]=tfguard.md [text]=tfguard.txt
  [codequality]=tfguard-codequality.json)
rm -f tfguard.json tfguard.sarif tfguard.md tfguard.txt tfguard-codequality.json tfguard.patch

if [ -n "${TFGUARD_API:-}" ]; then
  # API mode: the API writes tfguard.json, tfguard.sarif, tfguard.md (and tfguard.patch).
  prefix=
  export AWS_REGION="${INPUT_AWS_REGION:-${AWS_REGION:-}}"
  archive=${INPUT_ARCHIVE:-}
  if [ -z "$archive" ]; then
    archive="$RUNNER_TEMP/tfguard-config.tar.gz"
    git archive --format=tar.gz -o "$archive" HEAD ||
      fail "git archive HEAD failed: check the repository out first (actions/checkout)"
  fi
  bash "$GITHUB_ACTION_PATH/docs/ci/tfguard-scan.sh" "$archive"
  code=$?
  [ "$code" -le 1 ] || exit 2
  formats=(markdown sarif)
else
  # The scanned directory's path in the repository, for review comments ('' at the root).
  prefix=${INPUT_PATH:-.}
  while [[ "$prefix" == ./* ]]; do prefix=${prefix#./}; done
  prefix=${prefix%/}
  if [ "$prefix" = . ]; then prefix=; fi
  [[ "$prefix" != /* && "$prefix" != ..* ]] || fail "path must be a directory inside the workspace, relative to it: got '$INPUT_PATH'"
  [ -d "${INPUT_PATH:-.}" ] || fail "path '${INPUT_PATH:-.}' is not a directory of the workspace"
  cli=(node "$GITHUB_ACTION_PATH/bin/tfguard.js")
  scan=(scan "${INPUT_PATH:-.}" --fail-on "${TFGUARD_FAIL_ON:-error}")
  fix=(fix "${INPUT_PATH:-.}" --dry-run)
  if [ -n "${INPUT_CONFIG:-}" ]; then
    scan+=(--config "$INPUT_CONFIG")
    fix+=(--config "$INPUT_CONFIG")
  fi
  # The organisation's policy, judged as the repository input (its exceptions name repositories).
  if [ -n "${INPUT_POLICY:-}" ]; then
    [ -f "$INPUT_POLICY" ] || fail "policy '$INPUT_POLICY' is not a file of the workspace"
    scan+=(--policy "$INPUT_POLICY")
    fix+=(--policy "$INPUT_POLICY")
    if [ -n "${TFGUARD_REPOSITORY:-}" ]; then
      scan+=(--repository "$TFGUARD_REPOSITORY")
      fix+=(--repository "$TFGUARD_REPOSITORY")
    fi
  fi
  # Needs the CLI's --min-severity; the default passes nothing.
  if [ "${INPUT_MIN_SEVERITY:-notice}" != notice ]; then scan+=(--min-severity "$INPUT_MIN_SEVERITY"); fi
  "${cli[@]}" "${scan[@]}" --format json --output tfguard.json
  code=$?
  [ "$code" -le 1 ] || exit 2
  for f in "${formats[@]}"; do
    title=()
    if [ "$f" = markdown ] && [ -n "${TFGUARD_REPOSITORY:-}" ]; then title=(--title "$TFGUARD_REPOSITORY"); fi
    "${cli[@]}" "${scan[@]}" --format "$f" --output "${file[$f]}" "${title[@]}"
    [ $? -le 1 ] || exit 2
  done
  if [ "${TFGUARD_FIX:-false}" = true ]; then
    "${cli[@]}" "${fix[@]}" >tfguard.patch
    [ $? -le 1 ] || exit 2
  fi
fi

# Code scanning gets the severities asked for: the SARIF keeps only results of those levels.
if [ -f tfguard.sarif ]; then
  jq --argjson levels "$(printf '%s\n' "${levels[@]}" | jq -R . | jq -s .)" \
    '.runs[].results |= map(select(.level as $l | $levels | index($l)))' tfguard.sarif >tfguard.sarif.tmp &&
    mv tfguard.sarif.tmp tfguard.sarif
fi

{
  echo "reported=true"
  echo "prefix=$prefix"
  if [ "$code" -eq 1 ]; then echo "verdict=fail"; else echo "verdict=pass"; fi
  jq -r '.summary | "errors=\(.error)\nwarnings=\(.warning)\nnotices=\(.notice)"' tfguard.json
  echo "json=$PWD/tfguard.json"
  for f in "${formats[@]}"; do echo "$f=$PWD/${file[$f]}"; done
  if [ -n "${TFGUARD_API:-}" ]; then echo "scan-id=$(jq -r .scanId tfguard.json)"; fi
  if [ -f tfguard.patch ]; then echo "patch=true"; fi
} >>"$GITHUB_OUTPUT"
cat tfguard.md >>"$GITHUB_STEP_SUMMARY"
