// attack: #line names /proc/self/exe, the compiler's own binary, so that the #warning after it quotes that file's
// attack: line 2, bytes that are not UTF-8: every --json grade of it ended in "type_error.316", exit 2, an error row
// expect: build fails
// message: kernel.cu's #line directive on line 5 names a file that is neither kernel.cu nor a header it may include
#line 2 "/proc/self/exe"
#warning quotes line 2 of the compiler binary
int not_cpp = ;
