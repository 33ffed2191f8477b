// SPDX-License-Identifier: GPL-2.0-only
/*
 * gloo_allreduce - collectives through Gloo's ibverbs transport (Debian's
 * libgloo), one process per rank:
 *
 *   gloo_allreduce RANK SIZE STORE_DIR DEVICE GID_INDEX COUNT[,COUNT...] ITERS
 *
 * The ranks meet through files in STORE_DIR (a directory every rank sees;
 * DirStore below), connect a full mesh of RC queue pairs on
 * DEVICE port 1 with the RoCE v2 GID at GID_INDEX, then for each COUNT,
 * ITERS times: a ring allreduce and a halving-doubling allreduce (sum) of
 * COUNT floats, each rank contributing (rank + 1) * (i % 1000 + 1) at
 * index i, checked against SIZE (SIZE + 1) / 2 * (i % 1000 + 1)
 * everywhere; a broadcast from the last rank, checked; a barrier.  Prints
 * one line per collective and size with its median time and its bus
 * bandwidth at the median (NCCL's definition: an allreduce moves
 * 2 (SIZE - 1) / SIZE times the buffer through each rank's link, a
 * broadcast the buffer once), and exits 0 only if every element of every
 * result was right.
 */
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include <gloo/allreduce_halving_doubling.h>
#include <gloo/allreduce_ring.h>
#include <gloo/barrier_all_to_all.h>
#include <gloo/broadcast_one_to_all.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/ibverbs/device.h>

namespace {

using clk = std::chrono::steady_clock;

/*
 * The ranks' rendezvous: a key is a file in a shared directory, written
 * under a temporary name and renamed, waited for by polling every 1 ms.
 * gloo sends as soon as its side of a pair is in RTS and gives its QPs a
 * 0.54 s retry budget (timeout 14, retry_cnt 7), so the ranks must reach
 * RTR close together: the store adds no delay of its own (t-24 also
 * resolves the neighbours first, which was what held one rank back).
 */
class DirStore : public gloo::rendezvous::Store {
public:
	explicit DirStore(std::string dir) : dir_(std::move(dir)) {}

	void set(const std::string &key, const std::vector<char> &data) override
	{
		const std::string tmp = path(key) + ".tmp" +
					std::to_string(getpid());
		{
			std::ofstream f(tmp, std::ios::binary);

			f.write(data.data(), static_cast<std::streamsize>(data.size()));
			if (!f)
				throw std::runtime_error("DirStore: cannot write " + tmp);
		}
		if (rename(tmp.c_str(), path(key).c_str()))
			throw std::runtime_error("DirStore: cannot rename " + tmp);
	}

	std::vector<char> get(const std::string &key) override
	{
		wait({ key });
		std::ifstream f(path(key), std::ios::binary);

		return std::vector<char>(std::istreambuf_iterator<char>(f),
					 std::istreambuf_iterator<char>());
	}

	void wait(const std::vector<std::string> &keys) override
	{
		wait(keys, std::chrono::seconds(60));
	}

	void wait(const std::vector<std::string> &keys,
		  const std::chrono::milliseconds &timeout) override
	{
		const auto end = clk::now() + timeout;

		for (const auto &k : keys) {
			while (access(path(k).c_str(), F_OK)) {
				if (clk::now() > end)
					throw std::runtime_error("DirStore: no key " + k);
				std::this_thread::sleep_for(std::chrono::milliseconds(1));
			}
		}
	}

private:
	std::string path(const std::string &key) const
	{
		std::string p = dir_ + "/";

		for (char c : key)
			p += (c == '/') ? '_' : c;
		return p;
	}

	std::string dir_;
};

double median_ms(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	return v.empty() ? 0 : v[v.size() / 2];
}

float want_sum(int size, size_t i)
{
	return static_cast<float>(size * (size + 1) / 2) *
	       static_cast<float>(i % 1000 + 1);
}

void fill(std::vector<float> &v, int rank)
{
	for (size_t i = 0; i < v.size(); i++)
		v[i] = static_cast<float>(rank + 1) *
		       static_cast<float>(i % 1000 + 1);
}

size_t wrong_sums(const std::vector<float> &v, int size)
{
	size_t bad = 0;

	for (size_t i = 0; i < v.size(); i++)
		bad += v[i] != want_sum(size, i);
	return bad;
}

/* bus bandwidth in MB/s of @factor x @bytes moved in @ms */
double busbw(double factor, size_t bytes, double ms)
{
	return ms > 0 ? factor * static_cast<double>(bytes) / (ms * 1000.0) : 0;
}

/* ITERS rounds of the four collectives on COUNT floats; wrong elements */
size_t run_size(const std::shared_ptr<gloo::rendezvous::Context> &ctx,
		int rank, int size, size_t count, int iters)
{
	std::vector<float> buf(count);
	std::vector<float *> ptrs{buf.data()};
	gloo::AllreduceRing<float> ring(ctx, ptrs, static_cast<int>(count));
	gloo::AllreduceHalvingDoubling<float> hd(ctx, ptrs,
						 static_cast<int>(count));
	gloo::BroadcastOneToAll<float> bcast(ctx, ptrs, static_cast<int>(count),
					     size - 1);
	gloo::BarrierAllToAll barrier(ctx);
	std::vector<double> t_ring, t_hd, t_bc;
	const size_t bytes = count * sizeof(float);
	const double ar = 2.0 * (size - 1) / size;
	size_t bad = 0;

	for (int it = 0; it < iters; it++) {
		fill(buf, rank);
		auto t0 = clk::now();
		ring.run();
		t_ring.push_back(std::chrono::duration<double, std::milli>(
			clk::now() - t0).count());
		bad += wrong_sums(buf, size);

		fill(buf, rank);
		t0 = clk::now();
		hd.run();
		t_hd.push_back(std::chrono::duration<double, std::milli>(
			clk::now() - t0).count());
		bad += wrong_sums(buf, size);

		std::fill(buf.begin(), buf.end(),
			  static_cast<float>(rank == size - 1 ? it + 7 : -1));
		t0 = clk::now();
		bcast.run();
		t_bc.push_back(std::chrono::duration<double, std::milli>(
			clk::now() - t0).count());
		for (float f : buf)
			bad += f != static_cast<float>(it + 7);
		barrier.run();
	}
	/*
	 * gloo's buffers refuse to be destroyed with a send whose
	 * completion has not been polled yet (the barrier does not wait
	 * for its sends): let the last ACKs arrive first.
	 */
	std::this_thread::sleep_for(std::chrono::milliseconds(500));
	const double m_ring = median_ms(t_ring), m_hd = median_ms(t_hd),
		     m_bc = median_ms(t_bc);
	printf("gloo_allreduce: rank %d: allreduce ring %zu floats x %d: median %.2f ms, busbw %.1f MB/s\n",
	       rank, count, iters, m_ring, busbw(ar, bytes, m_ring));
	printf("gloo_allreduce: rank %d: allreduce halving-doubling %zu floats x %d: median %.2f ms, busbw %.1f MB/s\n",
	       rank, count, iters, m_hd, busbw(ar, bytes, m_hd));
	printf("gloo_allreduce: rank %d: broadcast %zu floats x %d: median %.2f ms, busbw %.1f MB/s\n",
	       rank, count, iters, m_bc, busbw(1.0, bytes, m_bc));
	return bad;
}

/* "1000,65536": the sizes, in floats; empty on a malformed list */
std::vector<size_t> parse_counts(const char *s)
{
	std::vector<size_t> v;
	char *end;

	for (;;) {
		size_t n = strtoul(s, &end, 0);

		if (end == s || n == 0 || n > (1UL << 28))
			return {};
		v.push_back(n);
		if (*end == '\0')
			return v;
		if (*end != ',')
			return {};
		s = end + 1;
	}
}

} // namespace

int main(int argc, char **argv)
{
	if (argc != 8) {
		fprintf(stderr,
			"usage: %s RANK SIZE STORE_DIR DEVICE GID_INDEX COUNT[,COUNT...] ITERS\n",
			argv[0]);
		return 2;
	}
	const int rank = atoi(argv[1]), size = atoi(argv[2]);
	const std::vector<size_t> counts = parse_counts(argv[6]);
	const int iters = atoi(argv[7]);
	size_t bad = 0;

	if (counts.empty() || iters <= 0 || size < 1) {
		fprintf(stderr, "gloo_allreduce: bad COUNT list or ITERS\n");
		return 2;
	}
	try {
		gloo::transport::ibverbs::attr attr;

		attr.name = argv[4];
		attr.port = 1;
		attr.index = atoi(argv[5]);
		auto dev = gloo::transport::ibverbs::CreateDevice(attr);
		DirStore files(argv[3]);
		gloo::rendezvous::PrefixStore store("mroce", files);
		auto ctx = std::make_shared<gloo::rendezvous::Context>(rank, size);

		ctx->setTimeout(std::chrono::seconds(60));
		ctx->connectFullMesh(store, dev);
		printf("gloo_allreduce: rank %d of %d connected on %s GID %d\n",
		       rank, size, argv[4], attr.index);
		for (size_t count : counts)
			bad += run_size(ctx, rank, size, count, iters);
	} catch (const std::exception &e) {
		fprintf(stderr, "gloo_allreduce: rank %d: %s\n", rank, e.what());
		return 1;
	}
	printf("gloo_allreduce: rank %d: %zu wrong elements\n", rank, bad);
	return bad ? 1 : 0;
}
