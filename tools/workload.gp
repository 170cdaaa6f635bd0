# SPDX-License-Identifier: GPL-2.0
# The storage's share of simulated misses per request/response
# transaction against N (make workload):
#   gnuplot -e "data='build/workload/misses.dat'; out='doc/workload-misses.png'" \
#           tools/workload.gp
# Columns (tools/workload-report --dat): N, then for inline, dynamic and
# hash in turn: LLC and L2 misses per transaction less the raw variant's.
if (!exists("data")) data = 'build/workload/misses.dat'
if (!exists("out")) out = 'doc/workload-misses.png'

set terminal pngcairo size 1100,480 font ",11" noenhanced
set output out
set multiplot layout 1,2 title "Request/response over N TCP connections: the storage's misses per transaction (variant less raw)\n(cachesim: L1D 32 KiB, L2 1 MiB per vCPU, LLC 32 MiB shared, LRU; median of the passes)"
set logscale x
set autoscale xfix
set offsets graph 0.08, graph 0.08, 0, 0
set xtics (1000, 3000, 10000, 30000, 100000)
set format x "%.0s%c"
set xlabel "N connections"
set ylabel "misses per transaction"
set grid
set key top left

set style line 2 lc rgb "#1b9e77" lw 2 pt 5
set style line 3 lc rgb "#d95f02" lw 2 pt 9
set style line 4 lc rgb "#7570b3" lw 2 pt 13

do for [l = 0:1] {
	set title (l == 0 ? "LLC" : "L2") . " misses per transaction"
	plot data using 1:(column(2 + l)) with linespoints ls 2 title "inline", \
	     data using 1:(column(4 + l)) with linespoints ls 3 title "dynamic", \
	     data using 1:(column(6 + l)) with linespoints ls 4 title "hash(cookie)"
}
unset multiplot
