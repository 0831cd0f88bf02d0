" Vim indent file for .llmp files: a line after one that opens a bracket goes one level in;
" a line that starts with a closing bracket comes one level out (as `llmp fmt` lays them out).
if exists("b:did_indent")
  finish
endif
let b:did_indent = 1

setlocal indentexpr=LlmpIndent(v:lnum) indentkeys=0},0],0),!^F,o,O
setlocal autoindent nosmartindent nocindent
let b:undo_indent = "setlocal indentexpr< indentkeys< autoindent< smartindent< cindent<"

if exists("*LlmpIndent")
  finish
endif

" The line without its comment and trailing blanks (a # inside a string stays).
function! s:Code(lnum) abort
  return substitute(getline(a:lnum), '^\%([^"#]\|"\%([^"\\]\|\\.\)*"\)*\zs#.*$', '', '')
endfunction

function! LlmpIndent(lnum) abort
  let prev = prevnonblank(a:lnum - 1)
  while prev > 0 && getline(prev) =~# '^\s*#'
    let prev = prevnonblank(prev - 1)
  endwhile
  if prev == 0
    return 0
  endif
  let ind = indent(prev)
  if s:Code(prev) =~# '[{(\[]\s*$'
    let ind += shiftwidth()
  endif
  if getline(a:lnum) =~# '^\s*[}\])]'
    let ind -= shiftwidth()
  endif
  return ind < 0 ? 0 : ind
endfunction
