#!/bin/sh
# vscode_package.sh - builds the VS Code extension (editors/vscode) as CI and a user would:
# `npm ci` from the committed package-lock.json, `vsce package`, then checks what the .vsix
# holds, and runs the TextMate grammar through VS Code's own tokenizer (vscode-textmate and
# Oniguruma, installed by the same npm ci) for tests/editors/grammar_check.py.
# The extension is staged in BUILD_DIR/vscode; its node_modules is kept there (with a copy
# of the lock file it was installed from) and reinstalled only when package-lock.json changes.
# Exits 77 (skipped) without npm or node 20.
# usage: vscode_package.sh SOURCE_ROOT BUILD_DIR PYTHON
set -eu
root=$1 build=$2 python=$3
if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
  echo "SKIP: npm and node are not installed: the VS Code extension is not packaged (install npm, node 20 or newer, to run this test)"
  exit 77
fi
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 20 ]; then
  echo "SKIP: node $(node --version) is too old for @vscode/vsce 3 (node 20 or newer): the VS Code extension is not packaged"
  exit 77
fi

stage=$build/vscode
mkdir -p "$stage"
# the sources, fresh each run; node_modules and the install stamp stay
find "$stage" -mindepth 1 -maxdepth 1 ! -name node_modules -exec rm -rf {} +
(cd "$root/editors/vscode" && tar cf - --exclude=node_modules --exclude='*.vsix' --dereference .) | (cd "$stage" && tar xf -)
if ! cmp -s "$stage/package-lock.json" "$stage/node_modules/.llmp-installed-lock.json" || [ ! -d "$stage/node_modules" ]; then
  echo "npm ci (package-lock.json is new or changed)"
  (cd "$stage" && npm ci --no-audit --no-fund --prefer-offline --loglevel=error)
  cp "$stage/package-lock.json" "$stage/node_modules/.llmp-installed-lock.json"
fi
node --check "$stage/extension.js"
(cd "$stage" && npx --no-install vsce package --allow-missing-repository --out llmp.vsix </dev/null)

# The package holds the extension, its grammar and configuration, and vscode-languageclient;
# not the test tokenizer nor the development packages.
"$python" - "$stage/llmp.vsix" <<'EOF'
import json, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
names = set(z.namelist())
manifest = json.loads(z.read("extension/package.json"))
need = ["extension/extension.js", "extension/LICENSE.txt",
        "extension/node_modules/vscode-languageclient/package.json"]
need += ["extension/" + g["path"].lstrip("./") for g in manifest["contributes"]["grammars"]]
need += ["extension/" + l["configuration"].lstrip("./") for l in manifest["contributes"]["languages"]]
missing = [n for n in need if n not in names]
extra = [n for n in names if n.startswith(("extension/test/", "extension/node_modules/vscode-textmate/",
                                            "extension/node_modules/@vscode/vsce/", "extension/node_modules/."))
         or n.endswith(".json") and n.count("/") == 1 and n not in ("extension/package.json",
                                                                      "extension/language-configuration.json")]
json.loads(z.read("extension/syntaxes/llmp.tmLanguage.json"))
if missing or extra:
    sys.exit(f"llmp.vsix: missing {missing}, should not hold {sorted(extra)[:5]}")
print(f"llmp.vsix: {len(names)} files, the grammar, the configuration and vscode-languageclient")
EOF

inputs=$stage/grammar-inputs.json tokens=$stage/grammar-tokens.json
"$python" "$root/tests/editors/grammar_check.py" "$root" --inputs "$inputs"
(cd "$stage" && node test/tokenize.js syntaxes/llmp.tmLanguage.json "$inputs" "$tokens")
"$python" "$root/tests/editors/grammar_check.py" "$root" --tokens "$tokens"
