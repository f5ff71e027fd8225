/* A harness around glibc's getopt_long, to compare core/argv with the real parser.
 * argv[1]: the optstring; argv[2]: long options, comma-separated NAME:KIND[:CANONICAL] (KIND
 * 0, 1, 2 as no_argument, required_argument, optional_argument; an alias shares its canonical
 * option's val, as real programs do); argv[3]: "1" for getopt_long_only.
 * stdin: one case per line, words separated by \x1f. For each case it prints one line:
 * "ERR" on a parse error, else each option as "o:NAME=VALUE" (or "o:NAME" without a value) and
 * each operand as "a:WORD", separated by \x1e. */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
	if (argc < 4) return 2;
	const char *shortopts = argv[1];
	struct option longs[256];
	int nl = 0;
	char *spec = strdup(argv[2]);
	for (char *tok = strtok(spec, ","); tok && nl < 255; tok = strtok(NULL, ",")) {
		char *k = strchr(tok, ':');
		if (!k) continue;
		*k++ = 0;
		char *canon = strchr(k, ':');
		if (canon) *canon++ = 0;
		longs[nl].name = tok;
		longs[nl].has_arg = atoi(k);
		longs[nl].flag = NULL;
		longs[nl].val = 1000 + nl;
		if (canon)
			for (int j = 0; j < nl; j++)
				if (strcmp(longs[j].name, canon) == 0) longs[nl].val = longs[j].val;
		nl++;
	}
	memset(&longs[nl], 0, sizeof longs[nl]);
	int longonly = strcmp(argv[3], "1") == 0;
	char line[65536];
	opterr = 0;
	while (fgets(line, sizeof line, stdin)) {
		line[strcspn(line, "\n")] = 0;
		char *words[512];
		int n = 0;
		words[n++] = "prog";
		char *p = line;
		if (*p) {
			for (;;) {
				char *sep = strchr(p, '\x1f');
				if (sep) *sep = 0;
				words[n++] = p;
				if (!sep || n >= 511) break;
				p = sep + 1;
			}
		}
		words[n] = NULL;
		optind = 0; /* full reinitialisation */
		char out[131072];
		size_t o = 0;
		int err = 0, c, idx;
		while ((c = longonly ? getopt_long_only(n, words, shortopts, longs, &idx)
		                     : getopt_long(n, words, shortopts, longs, &idx)) != -1) {
			if (c == '?' || c == ':') { err = 1; break; }
			const char *name;
			char buf[2] = {0, 0};
			if (c >= 1000) name = longs[c - 1000].name;
			else { buf[0] = (char)c; name = buf; }
			if (optarg) o += snprintf(out + o, sizeof out - o, "o:%s=%s\x1e", name, optarg);
			else o += snprintf(out + o, sizeof out - o, "o:%s\x1e", name);
		}
		if (err) { puts("ERR"); continue; }
		for (int i = optind; i < n; i++) o += snprintf(out + o, sizeof out - o, "a:%s\x1e", words[i]);
		out[o] = 0;
		puts(out);
	}
	return 0;
}
