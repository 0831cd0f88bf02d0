#!/bin/sh
# nvim_test.sh LLMP FILE DOCS: runs nvim_client.lua in a headless Neovim against `LLMP lsp`,
# with DOCS (docs/editors.md) for the key mappings it documents.
# Without nvim the test is skipped (exit 77, CTest's SKIP_RETURN_CODE) with a line saying so.
if ! command -v nvim >/dev/null 2>&1; then
  echo "SKIP: nvim not found: the Neovim client test of llmp lsp needs Debian's neovim (scripts/bootstrap.sh installs it)"
  exit 77
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
# Neovim's log and state go to a folder of their own; an error in the script ends nvim with 1.
XDG_CACHE_HOME=$tmp XDG_STATE_HOME=$tmp XDG_DATA_HOME=$tmp XDG_CONFIG_HOME=$tmp \
  LLMP="$1" LSP_FILE="$2" LSP_DOCS="$3" nvim --headless --clean -n \
  -c "lua local ok, e = pcall(dofile, '$(dirname "$0")/nvim_client.lua'); if not ok then io.stderr:write('nvim lsp test: ' .. tostring(e) .. '\n'); os.exit(1) end"
