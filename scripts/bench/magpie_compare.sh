#!/usr/bin/env bash
# Best move by class of position, this solver against MAGPIE, side by side
# in one run (docs/BENCHMARKS-solver.md, "Against MAGPIE").
#
# MAGPIE is built from its public source in a directory OUTSIDE this
# repository; nothing of it is committed here.  Get it once:
#   git clone https://github.com/jvc56/MAGPIE /work/magpie-src
#   (cd /work/magpie-src && git checkout 183bebc)
#
# Usage: scripts/bench/magpie_compare.sh [BUILD_DIR] [PER_CLASS_x4] [REPS] [ROUNDS]
#   BUILD_DIR: a Release build of this tree (default build-rel)
#   MAGPIE_SRC (env): the MAGPIE checkout (default /work/magpie-src)
#   CALLGRIND=1 (env): also count instructions per class (valgrind)
#
# What it does: builds MAGPIE (`make magpie BUILD=release`: -O3 -flto
# -march=native), writes its data directory (standard layout, English
# tiles, the same 113,922-word list as our default lexicon, its KWG and word
# map, an all-zero leave file, since the comparison is by score), exports
# the solver's bench positions with their best scores, builds
# scripts/bench/magpie_best.c against MAGPIE's objects, then runs the two
# engines alternately ROUNDS times (CPU time per position, medians of REPS
# passes), and with CALLGRIND=1 counts instructions per class in each.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-build-rel}
PER4=${2:-1000}
REPS=${3:-5}
ROUNDS=${4:-2}
MAGPIE_SRC=${MAGPIE_SRC:-/work/magpie-src}
SOLVER="$ROOT/$BUILD/bin/scrabble-solver"
LEX="$ROOT/$BUILD/share/wamerican.kwg"
WORDLIST=${SOLVER_WORDLIST:-/usr/share/dict/american-english-large}
NAME=NWLWAM # MAGPIE picks the English tile set for names starting NWL
WORK=${WORK:-/tmp/magpie-compare.$UID}

case "$(cd "$MAGPIE_SRC" && pwd)/" in
"$ROOT"/*)
    echo "MAGPIE_SRC must be outside this repository" >&2
    exit 2
    ;;
esac
[ -x "$SOLVER" ] && [ -f "$LEX" ] || {
    echo "build the solver first: cmake -S . -B $BUILD -DCMAKE_BUILD_TYPE=Release && cmake --build $BUILD -j2" >&2
    exit 2
}
mkdir -p "$WORK"

# MAGPIE, release flavour.
(cd "$MAGPIE_SRC" && make magpie BUILD=release -j2 >"$WORK/magpie-build.log" 2>&1)
DATA="$MAGPIE_SRC/data"
mkdir -p "$DATA/layouts" "$DATA/letterdistributions" "$DATA/lexica"
python3 - "$DATA" "$WORDLIST" "$NAME" <<'EOF'
import re, sys
data, wordlist, name = sys.argv[1:]
rows = ["T..d...T...d..T", ".D...t...t...D.", "..D...d.d...D..", "d..D...d...D..d",
        "....D.....D....", ".t...t...t...t.", "..d...d.d...d..", "T..d...D...d..T",
        "..d...d.d...d..", ".t...t...t...t.", "....D.....D....", "d..D...d...D..d",
        "..D...d.d...D..", ".D...t...t...D.", "T..d...T...d..T"]
sym = {'T': '=', 'D': '-', 't': '"', 'd': "'", '.': ' '}
with open(f"{data}/layouts/standard15.txt", "w") as f:
    f.write("7,7\n" + "\n".join("".join(sym[c] for c in r) for r in rows) + "\n")
count = [2, 9, 2, 2, 4, 12, 2, 3, 2, 9, 1, 1, 4, 2, 6, 8, 2, 1, 6, 4, 6, 4, 2, 2, 1, 2, 1]
value = [0, 1, 3, 3, 2, 1, 4, 2, 4, 1, 8, 5, 1, 3, 1, 1, 3, 10, 1, 1, 1, 1, 4, 4, 8, 4, 10]
lines = ["?,?,2,0,0"] + [f"{chr(65+i)},{chr(97+i)},{count[i+1]},{value[i+1]},{int(chr(65+i) in 'AEIOU')}"
                         for i in range(26)]
with open(f"{data}/letterdistributions/english.csv", "w") as f:
    f.write("\n".join(lines) + "\n")
# The solver's default lexicon: all-lowercase a-z entries of 2-15 letters.
words = set()
with open(wordlist, encoding="utf-8", errors="replace") as f:
    for w in f:
        w = w.rstrip("\n")
        if re.fullmatch(r"[a-z]{2,15}", w):
            words.add(w.upper())
with open(f"{data}/lexica/{name}.txt", "w") as f:
    f.write("\n".join(sorted(words)) + "\n")
print(f"MAGPIE lexicon {name}: {len(words)} words")
EOF
(cd "$MAGPIE_SRC" &&
    bin/magpie convert text2kwg "$NAME" >/dev/null &&
    bin/magpie convert text2wordmap "$NAME" -threads 1 >/dev/null &&
    bin/magpie createdata klv "$NAME" english >/dev/null)

# The harness, against MAGPIE's release objects.
OBJ=$(find "$MAGPIE_SRC/obj/release-b15-r7/src" -name '*.o')
gcc -O3 -flto -march=native -DNDEBUG -w -I"$MAGPIE_SRC/src" -o "$WORK/magpie_best" \
    "$ROOT/scripts/bench/magpie_best.c" $OBJ -lm -lpthread

"$SOLVER" bench --lexicon "$LEX" --only classes --positions "$PER4" --reps 1 \
    --export "$WORK/positions.tsv" >/dev/null
echo "positions: $(wc -l <"$WORK/positions.tsv") ($WORK/positions.tsv)"

for r in $(seq 1 "$ROUNDS"); do
    echo "== round $r: solver"
    "$SOLVER" bench --lexicon "$LEX" --only classes --positions "$PER4" --reps "$REPS" |
        grep -E '^best move|^top-1|^resident'
    echo "== round $r: MAGPIE"
    "$WORK/magpie_best" "$DATA" "$NAME" "$WORK/positions.tsv" "$REPS" wmp
done

if [ "${CALLGRIND:-0}" = 1 ]; then
    # valgrind cannot decode AVX-512, which -march=native emits on this
    # machine: the counting copy of MAGPIE is built with -mno-avx512f (the
    # timed one above keeps MAGPIE's own release flags).
    rm -rf "$WORK/magpie-cg" && mkdir -p "$WORK/magpie-cg"
    (cd "$MAGPIE_SRC" && tar cf - --exclude=./obj --exclude=./data --exclude=./bin .) |
        (cd "$WORK/magpie-cg" && tar xf -)
    (cd "$WORK/magpie-cg" && make magpie BUILD=release -j2 \
        'cflags.release=-O3 -flto -march=native -mno-avx512f -DNDEBUG -w' >"$WORK/magpie-cg-build.log" 2>&1)
    gcc -O3 -flto -march=native -mno-avx512f -DNDEBUG -w -I"$WORK/magpie-cg/src" -o "$WORK/magpie_best_cg" \
        "$ROOT/scripts/bench/magpie_best.c" $(find "$WORK/magpie-cg/obj/release-b15-r7/src" -name '*.o') \
        -lm -lpthread
    echo "== instructions per position (callgrind)"
    for c in blank_free one_blank two_blanks empty_board wide_open; do
        s=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null --toggle-collect="bench_best_$c*" \
            "$SOLVER" bench --lexicon "$LEX" --only classes --positions "$PER4" --reps 1 2>&1 |
            awk '/Collected/ {print $4}')
        m=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null --toggle-collect="magpie_class_$c*" \
            "$WORK/magpie_best_cg" "$DATA" "$NAME" "$WORK/positions.tsv" 1 wmp 2>&1 |
            awk '/Collected/ {print $4}')
        n=$(grep -c "^$c	" "$WORK/positions.tsv")
        echo "$c: $n positions; solver $((s / n)), MAGPIE $((m / n)) instructions per position"
    done
fi
