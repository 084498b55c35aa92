// attack: splits the directive with a backslash-newline (#inc\ lude), which the preprocessor joins before it reads
// attack: the line: a check that looks for "#include" in the text would not see it
// expect: build fails
// message: includes a file that is neither the lab's nor common/'s header nor the toolkit's
// not-shown: tile[threadIdx.x][threadIdx.y + j]
#inc\
lude "@COURSE_ROOT@/solutions/lab07-bank-conflicts/kernel.cu"
