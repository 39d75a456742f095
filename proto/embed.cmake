# Writes the bytes of IN as a C array `scrabble_descriptor_set` into OUT.
file(READ ${IN} hex HEX)
string(LENGTH "${hex}" n)
math(EXPR len "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
file(WRITE ${OUT} "/* Generated from the protoc descriptor set; do not edit. */\n#include <stddef.h>\nconst unsigned char scrabble_descriptor_set[] = {${body}};\nconst size_t scrabble_descriptor_set_len = ${len};\n")
