#!/bin/sh
# vim_syntax.sh - checks editors/vim in headless Neovim (vim_syntax.lua), then checks the
# syntax groups it gave every character of the shipped files and of grammar_check.py's
# samples as grammar_check.py checks the TextMate grammar's scopes; and checks that
# editors/nvim/llmp.lua starts a language server (a stub) for a .llmp buffer.  Exits 77
# (skipped) without nvim.
# usage: vim_syntax.sh SOURCE_ROOT WORK_DIR PYTHON
set -eu
root=$1 work=$2 python=$3
if ! command -v nvim >/dev/null 2>&1; then
  echo "SKIP: nvim is not installed: the Vim syntax file is not checked (apt-get install neovim to run this test)"
  exit 77
fi
mkdir -p "$work"
inputs=$work/vim-inputs.json groups=$work/vim-groups.json
stublog=$work/lsp-stub.log
rm -f "$groups" "$stublog"
"$python" "$root/tests/editors/grammar_check.py" "$root" --inputs "$inputs"
LLMP_ROOT=$root LLMP_INPUTS=$inputs LLMP_OUT=$groups LLMP_STUB=$root/tests/editors/lsp_stub.py LLMP_STUB_LOG=$stublog \
  nvim --headless -u NONE -i NONE -n --cmd "set rtp^=$root/editors/vim" \
       -c 'filetype plugin indent on' -c 'syntax on' -c "luafile $root/tests/editors/vim_syntax.lua" </dev/null
"$python" "$root/tests/editors/grammar_check.py" "$root" --tokens "$groups" --vim
