/* parser.y - the .llmp grammar (bison, pure, with byte-span locations).
 *
 * Actions only build AST nodes through the ast_* constructors; every check lives in the
 * semantic pass.  Declarations and nested blocks take their kind from a word (`model`,
 * `tier`), so the grammar knows no kind names and a misspelt kind gets a "did you mean"
 * from sema rather than a bare syntax error.  Error recovery resumes at the next
 * statement, so one run reports every syntax error of a file. */
%code requires {
#include "front/parse.h"
#ifndef YY_TYPEDEF_YY_SCANNER_T
#define YY_TYPEDEF_YY_SCANNER_T
typedef void *yyscan_t;
#endif
}

%code {
#include "lexer.h"
static void yyerror(YYLTYPE *loc, yyscan_t scanner, Parser *p, const char *msg);
#define B (&p->b)
#define YYLLOC_DEFAULT(Cur, Rhs, N)                         \
  do {                                                      \
    if (N) {                                                \
      (Cur).start = YYRHSLOC(Rhs, 1).start;                 \
      (Cur).end = YYRHSLOC(Rhs, N).end;                     \
    } else {                                                \
      (Cur).start = (Cur).end = YYRHSLOC(Rhs, 0).end;       \
    }                                                       \
  } while (0)
#define YYLOCATION_PRINT(File, Loc) ((void)0)
}

%define api.pure full
%define api.location.type {Span}
%define api.token.prefix {TOK_}
%define parse.error custom
%define parse.lac full
%locations
%param {yyscan_t scanner}
%parse-param {Parser *p}

/* Expect no conflicts at all: any shift/reduce or reduce/reduce conflict is a
 * grammar bug and fails the build. */
%expect 0

%union {
  const char *str;
  AstNode *node;
  AstList list;
}

%token NEWLINE "newline"
%token <str> IDENT "identifier"
%token <node> NUMBER "number"
%token <str> UNIT "unit"
%token <str> STRING "string"
%token IMPORT "import" EXTENDS "extends" LET "let" OP "op" VARY "vary" IN "in"
%token REQUIRE "require" MINIMIZE "minimize" MAXIMIZE "maximize" KEEP "keep"
%token TRUE "true" FALSE "false" AND "and" OR "or" NOT "not"
%token EQ "==" NE "!=" LE "<=" GE ">="

%type <node> topitem decl stmt expr primary path call arg
%type <list> items body lines args arglist exprs exprlist
%type <str> parent

/* The arena owns every node, list and string: a symbol bison discards during error
 * recovery is released with the arena, so there is nothing else to free.  Declared so
 * that a heap-owned semantic type added later must state its own destructor. */
%destructor { (void)$$; } <str> <node> <list>

%left OR
%left AND
%precedence NOT
%nonassoc EQ NE '<' LE '>' GE
%left '+' '-'
%left '*' '/' '%'
%precedence UMINUS

%%

file
  : sepsopt items               { p->root = ast_listnode(B, AST_FILE, @$, NULL, @$, $2); }
  ;

items
  : %empty                      { $$ = (AstList){0}; }
  | items topitem sepsopt       { $$ = $2 ? ast_append($1, $2) : $1; }
  ;

/* topitem -> "import" STRING | decl */
topitem
  : IMPORT STRING               { $$ = ast_name(B, AST_IMPORT, @$, $2, @2); }
  | decl                        { $$ = $1; }
  | error                       { $$ = NULL; }
  ;

/* decl -> KIND NAME [extends PARENT] body */
decl
  : IDENT IDENT parent body     { $$ = ast_decl(B, @$, $1, @1, $2, @2, $3, @3, $4); }
  ;

parent
  : %empty                      { $$ = NULL; }
  | EXTENDS IDENT               { $$ = $2; @$ = @2; }
  ;

/* body -> "{" { line } [ stmt ] "}": every statement but the last ends with a separator.
 * `error` can be shifted right after "{", so a syntax error in the first statement of a
 * body recovers inside the body, and the statements before an error are kept. */
body
  : '{' lines '}'               { $$ = $2; }
  | '{' lines stmt '}'          { $$ = ast_append($2, $3); }
  | '{' lines error '}'         { $$ = $2; }
  ;

lines
  : %empty                      { $$ = (AstList){0}; }
  | lines sep                   { $$ = $1; }
  | lines stmt sep              { $$ = ast_append($1, $2); }
  | lines error sep             { $$ = $1; }
  ;

seps : sep | seps sep ;
sepsopt : %empty | seps ;
sep : NEWLINE | ';' ;

stmt
  : IDENT '=' expr              { $$ = ast_named(B, AST_FIELD, @$, $1, @1, $3); }
  | IDENT body                  { $$ = ast_subblock(B, @$, $1, @1, NULL, @1, $2); }
  | IDENT IDENT body            { $$ = ast_subblock(B, @$, $1, @1, $2, @2, $3); }
  | LET path '=' expr           { $$ = ast_pair(B, AST_LET, @$, $2, $4); }
  | OP IDENT '=' expr           { $$ = ast_named(B, AST_OP, @$, $2, @2, $4); }
  | VARY path IN expr           { $$ = ast_pair(B, AST_VARY, @$, $2, $4); }
  | REQUIRE expr                { $$ = ast_pair(B, AST_REQUIRE, @$, NULL, $2); }
  | MINIMIZE expr               { $$ = ast_pair(B, AST_MINIMIZE, @$, NULL, $2); }
  | MAXIMIZE expr               { $$ = ast_pair(B, AST_MAXIMIZE, @$, NULL, $2); }
  | KEEP expr                   { $$ = ast_pair(B, AST_KEEP, @$, NULL, $2); }
  ;

path
  : IDENT                       { $$ = ast_name(B, AST_NAME, @$, $1, @1); }
  | path '.' IDENT              { $$ = ast_pair(B, AST_MEMBER, @$, $1, NULL); $$->name = $3; $$->name_span = @3; }
  ;

expr
  : expr OR expr                { $$ = ast_binop(B, OP_OR, $1, $3); }
  | expr AND expr               { $$ = ast_binop(B, OP_AND, $1, $3); }
  | NOT expr                    { $$ = ast_unop(B, OP_NOT, $2, @$); }
  | expr EQ expr                { $$ = ast_binop(B, OP_EQ, $1, $3); }
  | expr NE expr                { $$ = ast_binop(B, OP_NE, $1, $3); }
  | expr '<' expr               { $$ = ast_binop(B, OP_LT, $1, $3); }
  | expr LE expr                { $$ = ast_binop(B, OP_LE, $1, $3); }
  | expr '>' expr               { $$ = ast_binop(B, OP_GT, $1, $3); }
  | expr GE expr                { $$ = ast_binop(B, OP_GE, $1, $3); }
  | expr '+' expr               { $$ = ast_binop(B, OP_ADD, $1, $3); }
  | expr '-' expr               { $$ = ast_binop(B, OP_SUB, $1, $3); }
  | expr '*' expr               { $$ = ast_binop(B, OP_MUL, $1, $3); }
  | expr '/' expr               { $$ = ast_binop(B, OP_DIV, $1, $3); }
  | expr '%' expr               { $$ = ast_binop(B, OP_MOD, $1, $3); }
  | '-' expr %prec UMINUS       { $$ = ast_unop(B, OP_NEG, $2, @$); }
  | primary                     { $$ = $1; }
  ;

primary
  : NUMBER                      { $$ = $1; }
  | NUMBER UNIT                 { $$ = ast_with_unit(B, $1, @2, $2); }
  | STRING                      { $$ = ast_name(B, AST_STR, @$, $1, @1); }
  | TRUE                        { $$ = ast_new(B, AST_BOOL, @$); $$->u.boolean = true; }
  | FALSE                       { $$ = ast_new(B, AST_BOOL, @$); $$->u.boolean = false; }
  | IDENT                       { $$ = ast_name(B, AST_NAME, @$, $1, @1); }
  | primary '.' IDENT           { $$ = ast_pair(B, AST_MEMBER, @$, $1, NULL); $$->name = $3; $$->name_span = @3; }
  | call                        { $$ = $1; }
  | IDENT body                  { $$ = ast_listnode(B, AST_EXTEND, @$, $1, @1, $2); }
  | '[' exprs ']'               { $$ = ast_listnode(B, AST_LIST, @$, NULL, @$, $2); }
  | '(' expr ')'                { $$ = $2; }
  ;

call
  : IDENT '(' args ')'          { $$ = ast_listnode(B, AST_CALL, @$, $1, @1, $3); }
  ;

args
  : %empty                      { $$ = (AstList){0}; }
  | arglist                     { $$ = $1; }
  | arglist ','                 { $$ = $1; }
  ;

arglist
  : arg                         { $$ = ast_list1($1); }
  | arglist ',' arg             { $$ = ast_append($1, $3); }
  ;

arg
  : expr                        { $$ = $1; }
  | IDENT '=' expr              { $$ = ast_named(B, AST_NAMEDARG, @$, $1, @1, $3); }
  ;

exprs
  : %empty                      { $$ = (AstList){0}; }
  | exprlist                    { $$ = $1; }
  | exprlist ','                { $$ = $1; }
  ;

exprlist
  : expr                        { $$ = ast_list1($1); }
  | exprlist ',' expr           { $$ = ast_append($1, $3); }
  ;

%%

/* Only bison's own "memory exhausted" arrives here (syntax errors go through
 * yyreport_syntax_error); parse_file() reports the nesting limit in its words. */
static void yyerror(YYLTYPE *loc, yyscan_t scanner, Parser *p, const char *msg) {
  (void)scanner;
  (void)loc;
  (void)msg;
  p->syntax_errors++;
}

/* A token as a user would name it: identifiers and numbers with their text. */
static void describe_token(Parser *p, yysymbol_kind_t k, Span at, char *buf, size_t n) {
  const char *text = p->b.file->text + at.start;
  int len = (int)(at.end - at.start);
  if (len > 40) len = 40;
  switch (k) {
  case YYSYMBOL_YYEOF: snprintf(buf, n, "end of file"); break;
  case YYSYMBOL_NEWLINE: snprintf(buf, n, "end of line"); break;
  case YYSYMBOL_IDENT: snprintf(buf, n, "`%.*s`", len, text); break;
  case YYSYMBOL_NUMBER: snprintf(buf, n, "number `%.*s`", len, text); break;
  case YYSYMBOL_UNIT: snprintf(buf, n, "unit `%.*s`", len, text); break;
  case YYSYMBOL_STRING: snprintf(buf, n, "a string"); break;
  default: {
    const char *name = yysymbol_name(k);
    size_t l = strlen(name);
    if (l >= 2 && (name[0] == '"' || name[0] == '\'')) snprintf(buf, n, "`%.*s`", (int)l - 2, name + 1);
    else snprintf(buf, n, "`%s`", name);
  }
  }
}

static const char *expected_name(yysymbol_kind_t k, char *buf, size_t n) {
  const char *name = yysymbol_name(k);
  size_t l = strlen(name);
  if (k == YYSYMBOL_IDENT || k == YYSYMBOL_NUMBER || k == YYSYMBOL_STRING || k == YYSYMBOL_UNIT)
    snprintf(buf, n, "%s%.*s", k == YYSYMBOL_IDENT ? "a name" : "a ", k == YYSYMBOL_IDENT ? 0 : (int)l - 2, name + 1);
  else if (k == YYSYMBOL_NEWLINE) snprintf(buf, n, "end of line");
  else if (k == YYSYMBOL_YYEOF) snprintf(buf, n, "end of file");
  else if (l >= 2 && (name[0] == '"' || name[0] == '\'')) snprintf(buf, n, "`%.*s`", (int)l - 2, name + 1);
  else snprintf(buf, n, "`%s`", name);
  return buf;
}

/* Syntax errors: what was found, what could come (when that is a short list), and a hint
 * for the common cases: two statements on one line, an unclosed bracket. */
static int yyreport_syntax_error(const yypcontext_t *ctx, yyscan_t scanner, Parser *p) {
  (void)scanner;
  yysymbol_kind_t tok = yypcontext_token(ctx);
  Span at = *yypcontext_location(ctx);
  yysymbol_kind_t exp[YYNTOKENS];
  int n = yypcontext_expected_tokens(ctx, exp, YYNTOKENS);
  bool ends_stmt = false, starts_stmt = false, name = false;
  for (int i = 0; i < n; i++) {
    ends_stmt |= exp[i] == YYSYMBOL_NEWLINE;
    starts_stmt |= exp[i] == YYSYMBOL_LET;
    name |= exp[i] == YYSYMBOL_IDENT;
  }
  const char *tn = yysymbol_name(tok);
  bool closer = !strcmp(tn, "'}'") || !strcmp(tn, "')'") || !strcmp(tn, "']'");
  char found[96], msg[512];
  describe_token(p, tok, at, found, sizeof found);
  if (tok == YYSYMBOL_NEWLINE) {   /* point just after the last token, not past a comment */
    unsigned off = at.start;
    for (;;) {
      while (off > 0 && strchr(" \t\r", p->b.file->text[off - 1])) off--;
      if (p->ncomments && p->comments[p->ncomments - 1].end == off && off > p->comments[p->ncomments - 1].start)
        off = p->comments[p->ncomments - 1].start;
      else
        break;
    }
    at = (Span){off, off};
  }
  p->syntax_errors++;
  int k = snprintf(msg, sizeof msg, "unexpected %s", found);
  if (starts_stmt) {
    snprintf(msg + k, sizeof msg - (size_t)k, ", expecting a statement (`name = value`, `let`, `op`, ...) or `}`");
  } else if (ends_stmt && !name && tok != YYSYMBOL_YYEOF && n > 4) {
    snprintf(msg + k, sizeof msg - (size_t)k, ": a statement ends at a newline or `;`");
  } else if (n > 0 && n <= 5) {
    k += snprintf(msg + k, sizeof msg - (size_t)k, ", expecting ");
    for (int i = 0; i < n && k < (int)sizeof msg; i++) {
      char e[64];
      k += snprintf(msg + k, sizeof msg - (size_t)k, "%s%s", i == 0 ? "" : i == n - 1 ? " or " : ", ",
                    expected_name(exp[i], e, sizeof e));
    }
  }
  diag_error(p->diag, p->b.file, at, "syntax error: %s", msg);
  if (tok == YYSYMBOL_YYEOF && p->nopens) {
    Span o = p->opens[p->nopens - 1];
    diag_note(p->diag, p->b.file, o, "the `%c` opened here is not closed", p->b.file->text[o.start]);
  } else if (closer && p->has_skipped && p->skipped.start < at.start) {
    diag_note(p->diag, p->b.file, p->skipped, "the `%c` opened here is not closed", p->b.file->text[p->skipped.start]);
  }
  return 0;
}

/* The driver: checks the file is text, runs the scanner and parser, reports a tree that
 * is too deep.  Returns the root, possibly partial after syntax errors. */
AstNode *parse_file(Parser *p, Arena *a, Interner *in, Diag *d, SrcFile *f) {
  memset(p, 0, sizeof *p);
  p->b.arena = a;
  p->b.in = in;
  p->b.file = f;
  p->diag = d;
  const char *nul = memchr(f->text, '\0', f->len);
  if (nul) {
    diag_plain(d, f->path, "this is not a .llmp text file: it holds a NUL byte (at byte %u)",
               (unsigned)(nul - f->text));
    return NULL;
  }
  if (f->len >= 0x7fffffffu) {
    diag_plain(d, f->path, "file too large (%zu bytes; the limit is 2 GiB)", f->len);
    return NULL;
  }
  yyscan_t scanner;
  if (yylex_init_extra(p, &scanner)) {
    diag_plain(d, f->path, "cannot start the scanner");
    return NULL;
  }
  YY_BUFFER_STATE buf = yy_scan_bytes(f->text, (int)f->len, scanner);
  int rc = yyparse(scanner, p);
  yy_delete_buffer(buf, scanner);
  yylex_destroy(scanner);
  if (rc == 2) diag_error(d, f, (Span){p->off, p->off}, "input nested too deeply for the parser");
  if (p->b.too_deep)
    diag_error(d, f, p->b.too_deep_at, "expression or block nested more than %d levels deep "
               "(each operator of a long chain like `a + b + ...` is one level)", AST_MAX_DEPTH);
  if (rc != 0 || p->b.too_deep) p->syntax_errors++;
  if (!p->root) p->root = ast_listnode(&p->b, AST_FILE, (Span){0, (unsigned)f->len}, NULL, (Span){0, 0}, (AstList){0});
  return p->root;
}

AstNode *parse_alone(Parsed *x, Diag *d, SrcFile *f) {
  arena_init(&x->arena);
  intern_init(&x->in, &x->arena);
  int before = d->errors;
  x->root = parse_file(&x->p, &x->arena, &x->in, d, f);
  return x->root && d->errors == before ? x->root : NULL;
}

void parsed_free(Parsed *x) { arena_free(&x->arena); }
