/* forkscope/pp.h — preprocessor helpers for the task macros (internal).
 *
 * Task parameters are written as (type, name) pairs; FK__MAP applies a macro to each
 * pair, with a separator macro between them.  Up to 8 parameters, or none: FK__PARAMS
 * gives the list with a leading comma (nothing for none), FK__FIELDS the argument
 * struct's members (one unused char for none: C has no empty struct).  The empty case
 * uses __VA_OPT__ (GCC 8+, Clang 12+, in every -std mode). */
#ifndef FORKSCOPE_PP_H
#define FORKSCOPE_PP_H

#define FK__CAT(a, b) FK__CAT_(a, b)
#define FK__CAT_(a, b) a##b

#define FK__NARG(...) FK__NARG_(__VA_ARGS__, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define FK__NARG_(a1, a2, a3, a4, a5, a6, a7, a8, n, ...) n

#define FK__COMMA() ,
#define FK__NOSEP()

#define FK__MAP(M, S, ...) FK__CAT(FK__MAP_, FK__NARG(__VA_ARGS__))(M, S, __VA_ARGS__)
#define FK__MAP_1(M, S, a) M a
#define FK__MAP_2(M, S, a, ...) M a S() FK__MAP_1(M, S, __VA_ARGS__)
#define FK__MAP_3(M, S, a, ...) M a S() FK__MAP_2(M, S, __VA_ARGS__)
#define FK__MAP_4(M, S, a, ...) M a S() FK__MAP_3(M, S, __VA_ARGS__)
#define FK__MAP_5(M, S, a, ...) M a S() FK__MAP_4(M, S, __VA_ARGS__)
#define FK__MAP_6(M, S, a, ...) M a S() FK__MAP_5(M, S, __VA_ARGS__)
#define FK__MAP_7(M, S, a, ...) M a S() FK__MAP_6(M, S, __VA_ARGS__)
#define FK__MAP_8(M, S, a, ...) M a S() FK__MAP_7(M, S, __VA_ARGS__)

/* ", M(p1), M(p2)..." for the pairs, or nothing. */
#define FK__PARAMS(M, ...) __VA_OPT__(, FK__MAP(M, FK__COMMA, __VA_ARGS__))
/* "M(p1), M(p2)..." for the pairs, or `void` (a parameter list) / nothing (an argument list). */
#define FK__PLIST(M, ...) FK__CAT(FK__PLIST_, FK__ISEMPTY(__VA_ARGS__))(M, __VA_ARGS__)
#define FK__PLIST_0(M, ...) FK__MAP(M, FK__COMMA, __VA_ARGS__)
#define FK__PLIST_1(M, ...) void
#define FK__ALIST(M, ...) __VA_OPT__(FK__MAP(M, FK__COMMA, __VA_ARGS__))
/* 1 if there are no arguments, else 0. */
#define FK__ISEMPTY(...) FK__ISEMPTY_(__VA_OPT__(0, ) 1, 0)
#define FK__ISEMPTY_(a, ...) a
#define FK__FIELDS(...) FK__CAT(FK__FIELDS_, FK__ISEMPTY(__VA_ARGS__))(__VA_ARGS__)
#define FK__FIELDS_0(...) FK__MAP(FK__FIELD, FK__NOSEP, __VA_ARGS__)
#define FK__FIELDS_1(...) char fk__none;

/* What is done with one (type, name) pair. */
#define FK__PDECL(t, n) t n
#define FK__FIELD(t, n) t n;
#define FK__PNAME(t, n) n
#define FK__ARG(t, n) fk__a.n
/* A task's parameters kept in its frame (frames on frame stacks): pointers to them in the
 * body, and the copies of each one between the body and the saved argument struct. */
#define FK__PPTRS(...) FK__CAT(FK__PPTRS_, FK__ISEMPTY(__VA_ARGS__))(__VA_ARGS__)
#define FK__PPTRS_0(...) FK__MAP(FK__PPTR, FK__NOSEP, __VA_ARGS__)
#define FK__PPTRS_1(...) char fk__none;
#define FK__PPTR(t, n) __typeof__(t) *n;
#define FK__MAP_PADDR(...) FK__CAT(FK__MAP_PADDR_, FK__ISEMPTY(__VA_ARGS__))(__VA_ARGS__)
#define FK__MAP_PADDR_0(...) FK__MAP(FK__PADDR, FK__COMMA, __VA_ARGS__)
#define FK__MAP_PADDR_1(...) 0
#define FK__PADDR(t, n) &n
#define FK__PMOVES(M, ...) FK__CAT(FK__PMOVES_, FK__ISEMPTY(__VA_ARGS__))(M, __VA_ARGS__)
#define FK__PMOVES_0(M, ...) FK__MAP(M, FK__NOSEP, __VA_ARGS__)
#define FK__PMOVES_1(M, ...)
/* (Typed copies, not memcpy: a char-typed access may alias anything, and then the compiler
 * cannot see that a save before a call repeats the last one, with a record's stores between.) */
#define FK__PSAVE1(t, n) fk__d->n = *fk__pp->n;
#define FK__PLOAD1(t, n) *fk__pp->n = fk__s->n;
/* Bytes saved past a task's frame for its parameters: none for a task without any. */
#define FK__ARGS_SAVED(name, ...) (FK__ISEMPTY(__VA_ARGS__) ? 0 : FK__ROUND(sizeof(struct name##__args)))

#endif
