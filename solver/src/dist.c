/* Tile distributions as data: adding a language means adding a table. */
#include "internal.h"

/*                                     ?  A  B  C  D  E   F  G  H  I  J  K  L  M  N  O  P  Q   R  S
 * T  U  V  W  X  Y  Z */
static const solver_dist english = {
    .name = "english",
    .count = {2, 9, 2, 2, 4, 12, 2, 3, 2, 9, 1, 1, 4, 2, 6, 8, 2, 1, 6, 4, 6, 4, 2, 2, 1, 2, 1},
    .value = {0, 1, 3, 3, 2, 1, 4, 2, 4, 1, 8, 5, 1, 3, 1, 1, 3, 10, 1, 1, 1, 1, 4, 4, 8, 4, 10},
    .total = 100,
};

const solver_dist *solver_dist_english(void)
{
    return &english;
}
