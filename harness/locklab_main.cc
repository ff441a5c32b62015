// Entry point of the `locklab` command line (being written: see harness/cli.cc).
int main() { return 1; }
