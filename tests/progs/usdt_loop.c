/* usdt_loop.c - placeholder */
int main(void) { return 0; }
