# SPDX-License-Identifier: GPL-2.0
# Simulated misses per lookup against N, cold walk (make bench-misses):
#   gnuplot -e "data='build/bench-misses/misses.dat'; out='doc/bench-misses.png'" \
#           tools/cachesim/bench-misses.gp
# Columns (tools/cachesim/misses-table --dat): N, then for UDP and for TCP,
# for L1, L2 and LLC in turn: raw inline dynamic hash.
if (!exists("data")) data = 'build/bench-misses/misses.dat'
if (!exists("out")) out = 'doc/bench-misses.png'

set terminal pngcairo size 1440,520 font ",11" noenhanced
set output out
set multiplot layout 1,3 title "Simulated cache misses per lookup beyond the visit, cold walk over N sockets per protocol\n(cachesim: L1D 32 KiB 8-way, L2 1 MiB 16-way per vCPU, LLC 32 MiB 16-way shared, LRU; median of the passes)"
set logscale x
set xrange [700:140000]
set xtics (1000, 3000, 10000, 30000, 100000)
set format x "%.0s%c"
set xlabel "N"
set yrange [0:*]
set grid

set style line 1 lc rgb "#555555" lw 2 pt 7
set style line 2 lc rgb "#1b9e77" lw 2 pt 5
set style line 3 lc rgb "#d95f02" lw 2 pt 9
set style line 4 lc rgb "#7570b3" lw 2 pt 13

# Level l (0 L1, 1 L2, 2 LLC), path p (0 raw .. 3 hash), protocol t (0 udp, 1 tcp).
col(t, l, p) = 2 + 12 * t + 4 * l + p
names = "L1D L2 LLC"
# The key where the LLC panel is empty: few misses at small N.
do for [l = 0:2] {
	set title word(names, l + 1) . " misses per lookup"
	if (l == 2) { set key top left } else { unset key }
	set ylabel "misses per lookup"
	plot data using 1:col(0, l, 0) with linespoints ls 1 title "raw sk_mark, UDP", \
	     data using 1:col(1, l, 0) with linespoints ls 1 dt 2 title "raw, TCP", \
	     data using 1:col(0, l, 1) with linespoints ls 2 title "inline, UDP", \
	     data using 1:col(1, l, 1) with linespoints ls 2 dt 2 title "inline, TCP", \
	     data using 1:col(0, l, 2) with linespoints ls 3 title "dynamic, UDP", \
	     data using 1:col(1, l, 2) with linespoints ls 3 dt 2 title "dynamic, TCP", \
	     data using 1:col(0, l, 3) with linespoints ls 4 title "hash(cookie), UDP", \
	     data using 1:col(1, l, 3) with linespoints ls 4 dt 2 title "hash, TCP"
}
unset multiplot
