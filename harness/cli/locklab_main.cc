// Entry point of the `locklab` command line; everything is in harness/cli/cli.cc.
#include "harness/cli/cli.h"

int main(int argc, char** argv) { return locklab::CliMain(argc, argv); }
