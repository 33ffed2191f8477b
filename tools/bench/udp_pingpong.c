// SPDX-License-Identifier: GPL-2.0-only
/*
 * udp_pingpong - raw kernel UDP latency reference for tools/bench.
 *
 *   udp_pingpong -s [-p PORT] [-n ITERS] [-w WARMUP] [-t TIMEOUT]
 *   udp_pingpong -c ADDR [-p PORT] [-n ITERS] [-w WARMUP] [-l SIZE] [-t TIMEOUT]
 *
 * The server echoes WARMUP + ITERS datagrams, lingers 1 s and exits.  The client sends
 * one SIZE-byte datagram, busy-polls (MSG_DONTWAIT, like perftest polls its
 * CQ) for the echo, and repeats; it prints half the round-trip time, as
 * ib_*_lat do:
 *
 *   udp_pingpong: iters=N size=S t_min=.. t_typical=.. t_avg=.. p99=.. p99.9=.. t_max=.. usec retries=R
 *
 * t_typical is the median.  A datagram not echoed within 1 s is sent again
 * (counted in retries).  IPv4 only.  Exit 0 on success.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void usage(void)
{
	fprintf(stderr, "usage: udp_pingpong -s|-c ADDR [-p PORT] [-n ITERS] [-w WARMUP] [-l SIZE] [-t TIMEOUT]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int server = 0, port = 7300, iters = 1000, warmup = 100, size = 8, timeout = 60;
	const char *addr = NULL;
	struct sockaddr_in sa = { .sin_family = AF_INET }, peer;
	socklen_t plen = sizeof(peer);
	char buf[65536];
	double *lat, deadline, sum = 0;
	long retries = 0;
	int fd, opt, i, total;

	while ((opt = getopt(argc, argv, "sc:p:n:w:l:t:")) != -1) {
		switch (opt) {
		case 's': server = 1; break;
		case 'c': addr = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 'n': iters = atoi(optarg); break;
		case 'w': warmup = atoi(optarg); break;
		case 'l': size = atoi(optarg); break;
		case 't': timeout = atoi(optarg); break;
		default: usage();
		}
	}
	if (server == !!addr || iters < 1 || warmup < 0 || size < 1 ||
	    size > (int)sizeof(buf) || timeout < 1)
		usage();
	total = warmup + iters;
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0) {
		perror("socket");
		return 1;
	}
	sa.sin_port = htons(port);
	deadline = now_us() + timeout * 1e6;
	if (server) {
		sa.sin_addr.s_addr = htonl(INADDR_ANY);
		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			perror("bind");
			return 1;
		}
		for (i = 0; i < total;) {
			ssize_t n = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT,
					     (struct sockaddr *)&peer, &plen);

			if (n < 0) {
				if (errno != EAGAIN && errno != EINTR) {
					perror("recvfrom");
					return 1;
				}
				if (now_us() > deadline) {
					fprintf(stderr, "udp_pingpong: server timed out after %d echoes\n", i);
					return 1;
				}
				continue;
			}
			if (sendto(fd, buf, n, 0, (struct sockaddr *)&peer, plen) < 0)
				perror("sendto");
			/* the first word is the sequence number: count each once */
			if (n >= 4) {
				unsigned int seq;

				memcpy(&seq, buf, 4);
				if ((int)seq == i)
					i++;
			}
		}
		/* linger 1 s (blocking): echo again what the client resends */
		{
			struct timeval tv = { .tv_sec = 1 };
			ssize_t n;

			setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
			while ((n = recvfrom(fd, buf, sizeof(buf), 0,
					     (struct sockaddr *)&peer, &plen)) > 0)
				sendto(fd, buf, n, 0, (struct sockaddr *)&peer, plen);
		}
		return 0;
	}
	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1)
		usage();
	if (size < 4)
		size = 4;
	lat = calloc(iters, sizeof(*lat));
	if (!lat)
		return 1;
	memset(buf, 0xa5, size);
	for (i = 0; i < total; i++) {
		unsigned int seq = i, got;
		double t0 = now_us(), sent = t0;

		memcpy(buf, &seq, 4);
		if (sendto(fd, buf, size, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			perror("sendto");
			return 1;
		}
		for (;;) {
			ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
			double t = now_us();

			if (n >= 4) {
				memcpy(&got, buf, 4);
				if (got == seq) {
					if (i >= warmup)
						lat[i - warmup] = (t - t0) / 2;
					break;
				}
				continue;
			}
			if (n < 0 && errno != EAGAIN && errno != EINTR &&
			    errno != ECONNREFUSED) {
				perror("recv");
				return 1;
			}
			if (t > deadline) {
				fprintf(stderr, "udp_pingpong: timed out at iteration %d\n", i);
				return 1;
			}
			if (t - sent > 1e6) {	/* lost: send it again */
				memcpy(buf, &seq, 4);
				memset(buf + 4, 0xa5, size - 4);
				sendto(fd, buf, size, 0, (struct sockaddr *)&sa, sizeof(sa));
				sent = t;
				retries++;
			}
		}
	}
	qsort(lat, iters, sizeof(*lat), cmp_double);
	for (i = 0; i < iters; i++)
		sum += lat[i];
	printf("udp_pingpong: iters=%d size=%d t_min=%.3f t_typical=%.3f t_avg=%.3f p99=%.3f p99.9=%.3f t_max=%.3f usec retries=%ld\n",
	       iters, size, lat[0], lat[iters / 2], sum / iters,
	       lat[(int)(iters * 0.99)], lat[(int)(iters * 0.999)],
	       lat[iters - 1], retries);
	return 0;
}
