" Vim syntax file for the .llmp language (docs/language.md; grammar/lexer.l and grammar/parser.y
" are the reference).  tests/editors/vim_syntax.lua checks it in headless Neovim against the
" shipped files and the compiler's word tables, with tests/editors/grammar_check.py.
if exists("b:current_syntax")
  finish
endif
let s:cpo_save = &cpo
set cpo&vim

syn case match

" Any other name, punctuation, and characters that start no token (`!` alone: write `not`).
" Defined first: later items take precedence where several start at one column.
syn match llmpName /\<\w\+/
syn match llmpDelimiter /[{}()\[\],;.]/
syn match llmpOperator /==\|!=\|<=\|>=\|[<>=+\-*\/%]/
syn match llmpError /!\|[^ \t\r\n[:alnum:]_"(){}\[\],.;=+\-*\/%<>!#]\+/

" Enumeration words (compiler/front/schema.c); 1f1b starts with a digit
syn match llmpEnum /\<\%(every_micro_batch\|last_micro_batch\|reduce_scatter\|clamped_swiglu\|cross_entropy\|multi_tensor
      \\|dropout_add\|interleaved\|zero_bubble\|activation\|all_reduce\|per_tensor
      \\|allgather\|dragonfly\|layernorm\|selective\|alltoall\|balanced\|fat_tree
      \\|separate\|learned\|rmsnorm\|sigmoid\|softmax\|unfused\|uniform\|column\|nvidia
      \\|rotary\|swiglu\|switch\|system\|alibi\|flash\|fused\|geglu\|gpipe\|mxfp8\|nvfp4
      \\|relu2\|vocab\|1f1b\|adam\|bf16\|flex\|fp16\|fp32\|full\|gelu\|mesh\|node\|none\|norm
      \\|post\|relu\|ring\|rope\|silu\|tf32\|amd\|fp8\|pre\|row\|sgd\|cp\|dp\|ep\|pp\|tp\)\>/

" a.b.c: an object and its members
syn match llmpMember /\%(\.\s*\)\@<=\h\w*/

" NAME = : a field, or a named argument
syn match llmpField /\<\h\w*\ze\s*=\%(=\)\@!/

" NAME(: an operator (compiler/front/ops.def), a builtin, or another call
syn match llmpCall /\<\h\w*\ze\s*(/
syn match llmpBuiltin /\<\%(min\|max\|ceil\|floor\)\ze\s*(/
syn match llmpOpCall /\<\%(cross_entropy\|reducescatter\|activation\|allgather\|allreduce\|attention\|embedding
      \\|alltoall\|dropout\|experts\|softmax\|conv1d\|linear\|router\|norm\|rope\|add\|bmm
      \\|p2p\|ssd\)\ze\s*(/

" let NAME, op NAME
syn match llmpLet /\<let\>/ nextgroup=llmpLetName skipwhite
syn match llmpLetName /\h\w*\%(\s*\.\s*\h\w*\)*/ contained
syn match llmpOpKw /\<op\>/ nextgroup=llmpOpName skipwhite
syn match llmpOpName /\h\w*/ contained

syn keyword llmpStatement vary in require minimize maximize keep
syn keyword llmpLogical and or not
syn keyword llmpBoolean true false
syn keyword llmpImport import
syn keyword llmpExtends extends nextgroup=llmpParent skipwhite
syn match llmpParent /\h\w*/ contained

" KIND NAME [extends PARENT] {: a declaration or a labelled nested block (tier nvlink {);
" measured {: an unlabelled one
syn match llmpKind /\%(\%(^\|[{;]\)\s*\)\@<=\%(\%(let\|op\|vary\|in\|require\|minimize\|maximize\|keep\|import\|extends\|and\|or\|not\|true
      \\|false\)\>\)\@!\h\w*\ze\s\+\h\w*\%(\s\+extends\s\+\h\w*\)\=\s*{/ nextgroup=llmpDeclName skipwhite
syn match llmpDeclName /\h\w*/ contained nextgroup=llmpExtends skipwhite
syn match llmpKind /\%(\%(^\|[{;]\)\s*\)\@<=\<measured\ze\s*{/

" A number and the unit right after it (80 GiB, 80GiB, 400 Gb/s, 2e3us); a unit in the
" wrong case (80 GIB) is an error.  1f1b is a word.
syn match llmpNumber /\%(\w\)\@<!\d[0-9_]*\%(\.\d\+\)\=\%([eE][+-]\=\d\+\)\=\%(\w\)\@!/
syn match llmpNumber /\%(\w\)\@<!\d[0-9_]*\%(\.\d\+\)\=\%([eE][+-]\=\d\+\)\=\ze[ \t]*\c\%(GFLOP\|PFLOP\|TFLOP\|FLOP\|GiB\|KiB\|MiB\|TiB\|GB\|Gb\|KB\|Kb\|MB\|Mb\|TB\|Tb\|ms\|ns\|us\)\%(\/s\)\=\w\@!/ nextgroup=llmpUnit,llmpBadUnit skipwhite
syn match llmpNumber /\%(\w\)\@<!\d[0-9_]*\%(\.\d\+\)\=\%([eE][+-]\=\d\+\)\=\ze[ \t]*\%(B\|b\|s\)\%(\/s\)\=\w\@!/ nextgroup=llmpUnit skipwhite
syn match llmpBadUnit /\c\%(GFLOP\|PFLOP\|TFLOP\|FLOP\|GiB\|KiB\|MiB\|TiB\|GB\|Gb\|KB\|Kb\|MB\|Mb\|TB\|Tb\|ms\|ns\|us\)\%(\/s\)\=\w\@!/ contained
syn match llmpUnit /\%(GFLOP\|PFLOP\|TFLOP\|FLOP\|GiB\|KiB\|MiB\|TiB\|GB\|Gb\|KB\|Kb\|MB\|Mb\|TB\|Tb\|ms\|ns\|us
      \\|B\|b\|s\)\%(\/s\)\=\w\@!/ contained

" A string does not span lines: an unterminated one ends with its line.
syn region llmpString start=/"/ skip=/\\./ end=/"/ end=/$/ oneline contains=llmpEscape,llmpBadEscape
syn match llmpBadEscape /\\./ contained
syn match llmpEscape /\\["\\nt]/ contained

syn keyword llmpTodo TODO FIXME XXX NOTE contained
syn match llmpComment /#.*$/ contains=llmpTodo,@Spell

hi def link llmpName NONE
hi def link llmpDelimiter Delimiter
hi def link llmpOperator Operator
hi def link llmpError Error
hi def link llmpEnum Constant
hi def link llmpMember Identifier
hi def link llmpField Identifier
hi def link llmpCall Function
hi def link llmpBuiltin Function
hi def link llmpOpCall Function
hi def link llmpLet Keyword
hi def link llmpLetName Identifier
hi def link llmpOpKw Keyword
hi def link llmpOpName Function
hi def link llmpStatement Statement
hi def link llmpLogical Operator
hi def link llmpBoolean Boolean
hi def link llmpImport Include
hi def link llmpExtends StorageClass
hi def link llmpKind Type
hi def link llmpDeclName Structure
hi def link llmpParent Structure
hi def link llmpNumber Number
hi def link llmpUnit Type
hi def link llmpBadUnit Error
hi def link llmpString String
hi def link llmpEscape SpecialChar
hi def link llmpBadEscape Error
hi def link llmpTodo Todo
hi def link llmpComment Comment

let b:current_syntax = "llmp"
let &cpo = s:cpo_save
unlet s:cpo_save
