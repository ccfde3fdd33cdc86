#!/usr/bin/env bash
# The admin's path of docs/importing.md, walked as a new user would: every `build/apps/headroom`
# line of that page (and of the README's quick start) is run from the repository root, as it is
# copy-pasted, and must succeed; every scenario the page shows under a `# tests/...` first line
# must be that file, byte for byte; the figures the page quotes (`ok (scenario ...)`) must be what
# validate prints; and the README's quick start must name the keys.
# Usage: importing_docs_test.sh HEADROOM_BINARY SOURCE_DIR
set -uo pipefail
bin="$1"; src="$2"
cd "$src" || exit 1
doc=docs/importing.md
pass=0; fail=0
out_all=""

run_line() {  # run_line WHERE COMMAND-LINE (starting with build/apps/headroom)
  local where="$1" line="$2" out code
  line="${line%%#*}"                                   # a trailing comment
  line="${line%"${line##*[![:space:]]}"}"              # trailing blanks
  read -r -a words <<<"$line"
  words[0]="$bin"
  out="$("${words[@]}" 2>&1)"; code=$?
  out_all+="$out"$'\n'
  if [ "$code" -ne 0 ]; then
    echo "FAIL $where: \`$line\` exited $code"; echo "$out" | head -20; fail=$((fail + 1))
  else
    pass=$((pass + 1))
  fi
}

# 1. The page's commands.
n=0
while IFS= read -r entry; do
  lineno="${entry%%:*}"; text="${entry#*:}"
  run_line "$doc:$lineno" "${text#"${text%%[![:space:]]*}"}"
  n=$((n + 1))
done < <(grep -n '^    build/apps/headroom ' "$doc")
if [ "$n" -lt 6 ]; then echo "FAIL $doc: $n build/apps/headroom commands, expected at least 6"; fail=$((fail + 1)); fi

# 2. Each scenario shown is the file it names.
awk -v doc="$doc" '
  /^```yaml$/ { inblock = 1; first = 1; body = ""; next }
  inblock && /^```$/ { inblock = 0; if (name != "") print name "\t" start; name = ""; next }
  inblock { if (first && $0 ~ /^# tests\//) { name = substr($0, 3); start = NR } first = 0 }
' "$doc" >"${TMPDIR:-/tmp}/importing_docs_blocks.$$"
nblocks=0
while IFS=$'\t' read -r file start; do
  nblocks=$((nblocks + 1))
  shown="$(awk -v s="$start" 'NR >= s { if ($0 == "```") exit; print }' "$doc")"
  if [ ! -f "$file" ]; then
    echo "FAIL $doc:$start: names $file, which does not exist"; fail=$((fail + 1))
  elif [ "$shown" != "$(cat "$file")" ]; then
    echo "FAIL $doc:$start: the scenario shown differs from $file"; diff <(echo "$shown") "$file" | head; fail=$((fail + 1))
  else
    pass=$((pass + 1))
  fi
done <"${TMPDIR:-/tmp}/importing_docs_blocks.$$"
rm -f "${TMPDIR:-/tmp}/importing_docs_blocks.$$"
if [ "$nblocks" -lt 3 ]; then echo "FAIL $doc: $nblocks scenarios naming their file, expected 3"; fail=$((fail + 1)); fi

# 3. The figures the page quotes are what validate printed.
while IFS= read -r quoted; do
  if grep -qF -- "$quoted" <<<"$out_all"; then pass=$((pass + 1)); else
    echo "FAIL $doc: quotes \`$quoted\`, which no command printed"; fail=$((fail + 1))
  fi
done < <(grep -o '`ok (scenario [^`]*)`' "$doc" | tr -d '`')

# 4. The README's quick start: its fixture commands run, and it names the keys.
while IFS= read -r cmd; do run_line README.md "$cmd"; done \
  < <(grep -o 'build/apps/headroom [a-z-]* tests/data/imports/[^ `]*\.yaml\( --policies [a-z,]*\)\?' README.md)
for key in 'slurm_conf' 'sacctmgr_qos' 'sshare' 'fields: xdmod' 'manifests: [...]' 'labels:' 'docs/importing.md' \
           'build/apps/headroom compare tests/data/imports/slurm/site.yaml' \
           'build/apps/headroom compare tests/data/imports/kueue/site.yaml'; do
  if grep -qF -- "$key" README.md; then pass=$((pass + 1)); else
    echo "FAIL README.md: the quick start does not name $key"; fail=$((fail + 1))
  fi
done

echo "importing docs: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
