#!/usr/bin/env bash
# Pull-request comments of the tfguard GitHub Action (action.yml), through GitHub's REST API with
# curl and jq. Needs GITHUB_API_URL, GITHUB_REPOSITORY, GITHUB_TOKEN and GITHUB_EVENT_PATH (the
# runner's copy of the pull_request event: its number and head commit).
#
#   github-pr.sh comment MARKER FILE [update-only]
#       FILE's text as the pull request's comment that starts with MARKER: the comment this action
#       left before is updated (one comment per pull request), else a new one is posted; with
#       `update-only`, nothing is posted when there is no earlier comment.
#   github-pr.sh suggestions REPORT.json PREFIX
#       Each finding of the JSON report whose fix is one edit (`fix.suggestion`) as a review comment
#       on the lines it changes, with a ```suggestion block (GitHub's "Commit suggestion" button).
#       PREFIX is the scanned directory's path in the repository ('' for its root). A suggestion
#       already left on the same lines is not posted again; one GitHub refuses (lines outside the
#       pull request's diff: 422) is counted and left to the fix patch comment.
#
# Review comments use `line`, `side` and, for several lines, `start_line` / `start_side` on the head
# commit (`commit_id`), as GitHub's REST reference for "Create a review comment for a pull request"
# recommends (`position` is deprecated); GitHub answers 422 for lines outside the diff.
#
# Comments are this action's only when they start with the marker AND their author is the token's
# user: someone else's comment that quotes the marker is never edited. The author is COMMENT_AUTHOR
# when set, else the token's login (GET /user), else github-actions[bot] (the GITHUB_TOKEN's bot,
# for which GET /user is refused).
set -euo pipefail

PR_NUMBER=$(jq -er '.pull_request.number' "$GITHUB_EVENT_PATH")
HEAD_SHA=$(jq -r '.pull_request.head.sha // empty' "$GITHUB_EVENT_PATH")

api="$GITHUB_API_URL/repos/$GITHUB_REPOSITORY"
headers=(-H "authorization: Bearer $GITHUB_TOKEN" -H 'accept: application/vnd.github+json'
  -H 'x-github-api-version: 2022-11-28')

author() {
  if [ -n "${COMMENT_AUTHOR:-}" ]; then
    printf '%s' "$COMMENT_AUTHOR"
  elif login=$(curl -sS --fail "${headers[@]}" "$GITHUB_API_URL/user" 2>/dev/null | jq -er .login); then
    printf '%s' "$login"
  else
    printf 'github-actions[bot]'
  fi
}

# Every page of a list (GitHub pages at 100).
list() {
  local url=$1 page=1 out='[]' part
  while :; do
    part=$(curl -sS --fail "${headers[@]}" "$url?per_page=100&page=$page")
    out=$(jq -s 'add' <(printf '%s' "$out") <(printf '%s' "$part"))
    [ "$(jq length <<<"$part")" -lt 100 ] && break
    page=$((page + 1))
  done
  printf '%s' "$out"
}

comment() {
  local marker=$1 file=$2 mode=${3:-} me existing body
  me=$(author)
  body=$(jq -Rs --arg marker "$marker" '{body: ($marker + "\n" + .)}' "$file")
  existing=$(list "$api/issues/$PR_NUMBER/comments" |
    jq -r --arg marker "$marker" --arg me "$me" \
      '[.[] | select((.body // "" | startswith($marker)) and .user.login == $me)][0].id // empty')
  if [ -n "$existing" ]; then
    curl -sS --fail -o /dev/null -X PATCH "${headers[@]}" "$api/issues/comments/$existing" --data "$body"
  elif [ "$mode" != update-only ]; then
    curl -sS --fail -o /dev/null -X POST "${headers[@]}" "$api/issues/$PR_NUMBER/comments" --data "$body"
  fi
}

suggestions() {
  local report=$1 prefix=$2 sha=$HEAD_SHA marker='<!-- tfguard:suggestion -->' me left posted=0 refused=0
  me=$(author)
  # Lines this action already left a suggestion on, as path:start:end:text.
  left=$(list "$api/pulls/$PR_NUMBER/comments" |
    jq -c --arg marker "$marker" --arg me "$me" \
      '[.[] | select((.body // "" | startswith($marker)) and .user.login == $me) | .body]')
  while IFS= read -r payload; do
    if jq -e --argjson left "$left" '.body as $b | $left | index($b)' <<<"$payload" >/dev/null; then
      continue
    fi
    code=$(curl -sS -o /dev/null -w '%{http_code}' -X POST "${headers[@]}" \
      "$api/pulls/$PR_NUMBER/comments" --data "$payload")
    case $code in
      2??) posted=$((posted + 1)) ;;
      422) refused=$((refused + 1)) ;;
      *) echo "tfguard: GitHub answered $code to a review comment" >&2 && return 1 ;;
    esac
  done < <(jq -c --arg prefix "$prefix" --arg sha "$sha" --arg marker "$marker" '
    .findings[]
    | select(.suppressed == null and .fix.suggestion != null)
    | .fix.suggestion as $s
    | (if $prefix == "" then $s.file else $prefix + "/" + $s.file end) as $path
    | ([$s.text | match("`+"; "g").length] | max // 0) as $run
    | ("`" * ([3, $run + 1] | max)) as $fence
    | {
        commit_id: $sha,
        path: $path,
        side: "RIGHT",
        line: $s.endLine,
        body: ($marker + "\n**tfguard** `" + .ruleId + "`: " + .fix.description + "\n\n" +
               $fence + "suggestion\n" + $s.text + "\n" + $fence)
      }
    + (if $s.startLine < $s.endLine then {start_line: $s.startLine, start_side: "RIGHT"} else {} end)
  ' "$report")
  echo "suggestions=$posted" >>"${GITHUB_OUTPUT:-/dev/null}"
  if [ "$refused" -gt 0 ]; then
    echo "::notice title=tfguard::$refused suggested change(s) are on lines outside this pull request's diff, where GitHub takes no review comment: see the fix comment or run tfguard fix"
  fi
}

case "${1:-}" in
  comment) shift && comment "$@" ;;
  suggestions) shift && suggestions "$@" ;;
  *) echo "usage: github-pr.sh comment MARKER FILE [update-only] | suggestions REPORT PREFIX" >&2 && exit 2 ;;
esac
