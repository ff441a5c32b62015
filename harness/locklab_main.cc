// Entry point of the `locklab` command line; everything is in harness/cli.cc.
#include "harness/cli.h"

int main(int argc, char** argv) { return locklab::CliMain(argc, argv); }
