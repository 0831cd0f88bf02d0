#!/usr/bin/env python3
"""Writes runtime/fastmath_tables.c: the tables of runtime/fastmath.h's rt_log and rt_exp,
computed to 60 significant digits with Python's decimal module and rounded once to double.

  python3 scripts/gen_fastmath_tables.py > runtime/fastmath_tables.c

exp: rt_exp_table[j] = 2^(j/64), j = 0..63.
log: for x's mantissa offset from 0x3fe6000000000000 (0.6875), whose top 7 bits j split
[0.6875, 1.375) into 80 cells 1/256 wide below 1 and 48 cells 1/128 wide above,
rt_log_table[j] = {invc, logc}: invc = 1/c rounded to double, c the cell's centre, and
logc = -log(invc) of that double, so that log(z) = logc + log1p(z * invc - 1) holds exactly."""
from decimal import Decimal, getcontext

getcontext().prec = 60
LN2 = Decimal(2).ln()


def main():
    out = ['/* fastmath_tables.c - written by scripts/gen_fastmath_tables.py; do not edit. */', '/* clang-format off */',
           '#include "fastmath.h"', '',
           'const double rt_exp_table[RT_EXP_N] = {']
    for j in range(64):
        out.append('    %s,' % float((LN2 * j / 64).exp()).hex())
    out += ['};', '', 'const double rt_log_table[RT_LOG_N][2] = {']
    for j in range(128):
        m = 0x6000000000000 + (j << 45)
        if m < 2 ** 52:
            lo, width = (1 + Decimal(m) / 2 ** 52) / 2, Decimal(1) / 256
        else:
            lo, width = 1 + Decimal(m - 2 ** 52) / 2 ** 52, Decimal(1) / 128
        invc = float(1 / (lo + width / 2))
        out.append('    {%s, %s},' % (invc.hex(), float(-Decimal(invc).ln()).hex()))
    out.append('};')
    print('\n'.join(out))


if __name__ == '__main__':
    main()
