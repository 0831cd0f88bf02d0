-- llmp.lua - starts `llmp lsp` for .llmp buffers with Neovim's built-in LSP client (Neovim
-- 0.7 or newer): one server per root folder (the nearest with a .git, or the file's own),
-- shared by its buffers.  vim.g.llmp_path names the executable (default: llmp on PATH).
-- Load it from init.lua with dofile('/path/to/llmp/editors/nvim/llmp.lua'), with editors/vim
-- on 'runtimepath' for the filetype (docs/editors.md).
local clients = {}   -- root folder -> client id

local function root_of(file)
  local dir = vim.fn.fnamemodify(file, ':p:h')
  local git = vim.fn.finddir('.git', dir .. ';')   -- a repository, or a worktree's .git file
  if git == '' then git = vim.fn.findfile('.git', dir .. ';') end
  if git == '' then return dir end
  return vim.fn.fnamemodify((vim.fn.fnamemodify(git, ':p'):gsub('/$', '')), ':h')
end

vim.api.nvim_create_autocmd('FileType', {
  pattern = 'llmp',
  group = vim.api.nvim_create_augroup('llmp_lsp', { clear = true }),
  callback = function(args)
    local root = root_of(vim.api.nvim_buf_get_name(args.buf))
    local id = clients[root]
    if not id or not vim.lsp.get_client_by_id(id) then
      id = vim.lsp.start_client({ name = 'llmp', cmd = { vim.g.llmp_path or 'llmp', 'lsp' }, root_dir = root })
      clients[root] = id
    end
    if id then vim.lsp.buf_attach_client(args.buf, id) end
  end,
})
