" Vim filetype plugin for .llmp files: # comments, and the layout `llmp fmt` writes (two
" spaces a level).
if exists("b:did_ftplugin")
  finish
endif
let b:did_ftplugin = 1

setlocal comments=:# commentstring=#\ %s
setlocal expandtab shiftwidth=2 softtabstop=2
setlocal formatoptions-=t formatoptions+=croql
let b:undo_ftplugin = "setlocal comments< commentstring< expandtab< shiftwidth< softtabstop< formatoptions<"
