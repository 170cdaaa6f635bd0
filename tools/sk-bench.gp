# SPDX-License-Identifier: GPL-2.0
# ns per lookup against N from sk-bench's data (make bench-plot):
#   gnuplot -e "data='build/bench/lookup.dat'; out='doc/bench-lookup.png'" tools/sk-bench.gp
# Columns: N udp_raw udp_inline udp_dynamic udp_hash tcp_raw tcp_inline
# tcp_dynamic tcp_hash free_dynamic_ms free_inline_ms udp_call tcp_call
# udp_rawend tcp_rawend (cold walk medians; "call": the inline map through
# the helper call; "rawend": a field on the socket's line before the tail).
if (!exists("data")) data = 'build/bench/lookup.dat'
if (!exists("out")) out = 'doc/bench-lookup.png'

set terminal pngcairo size 960,600 font ",11" noenhanced
set output out
set title "bpf_sk_storage_get() and alternatives: cold walk over N sockets per protocol\n(median ns per lookup, visit subtracted; QEMU TCG guest, 2 vCPUs)"
set xlabel "N (UDP sockets, and as many TCP sockets)"
set ylabel "ns per lookup"
set logscale x
set xrange [700:140000]
set xtics (1000, 3000, 10000, 30000, 100000)
set format x "%.0s%c"
set yrange [0:*]
set grid
set key outside right top

set style line 1 lc rgb "#555555" lw 2 pt 7
set style line 2 lc rgb "#1b9e77" lw 2 pt 5
set style line 3 lc rgb "#d95f02" lw 2 pt 9
set style line 4 lc rgb "#7570b3" lw 2 pt 13
set style line 5 lc rgb "#66a61e" lw 2 pt 11
set style line 6 lc rgb "#aaaaaa" lw 2 pt 6

plot data using 1:2 with linespoints ls 1 title "raw sk_mark, UDP", \
     data using 1:6 with linespoints ls 1 dt 2 title "raw sk_mark, TCP", \
     data using 1:14 with linespoints ls 6 title "raw, line before the tail, UDP", \
     data using 1:15 with linespoints ls 6 dt 2 title "raw, line before the tail, TCP", \
     data using 1:3 with linespoints ls 2 title "inline, UDP", \
     data using 1:7 with linespoints ls 2 dt 2 title "inline, TCP", \
     data using 1:12 with linespoints ls 5 title "inline by helper call, UDP", \
     data using 1:13 with linespoints ls 5 dt 2 title "inline by helper call, TCP", \
     data using 1:4 with linespoints ls 3 title "dynamic, UDP", \
     data using 1:8 with linespoints ls 3 dt 2 title "dynamic, TCP", \
     data using 1:5 with linespoints ls 4 title "hash(cookie), UDP", \
     data using 1:9 with linespoints ls 4 dt 2 title "hash(cookie), TCP"
