// Entry point of `kj`.
int main() { return 0; }
