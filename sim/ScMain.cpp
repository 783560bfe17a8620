// Debian's libsystemc.so defines main() and is linked with BIND_NOW, so every program that
// links SystemC must provide sc_main. nncosim's programs (the CLI, the test executables) have
// their own main() and call sc_start() directly; this entry point runs only if a program
// forgets its main(), and then it says so.
#include <cstdio>

#include <systemc>  // declares sc_main extern "C"

int sc_main(int /*argc*/, char* /*argv*/[]) {
    std::fprintf(stderr,
                 "nncosim: sc_main is not an entry point; the program must define main()\n");
    return 1;
}
