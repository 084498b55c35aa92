// The target that holds the test programs' precompiled headers (CMakeLists.txt,
// test_headers): a library needs one source file to exist.
