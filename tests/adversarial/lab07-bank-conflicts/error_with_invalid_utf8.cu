// attack: an #error whose text is not UTF-8 (a stray byte, an overlong '/', a NUL-like overlong), so that the JSON
// attack: of every grade of it cannot be written: `grader grade --json` ended in "type_error.316", exit 2, and its
// attack: batch row was an error forever, never scored
// expect: build fails
// message: #error not UTF-8: ï¿½ ï¿½ï¿½ ï¿½ï¿½ end
#include "lab.cuh"
#error not UTF-8: ÿ À¯ À€ end
