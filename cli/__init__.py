"""Thin command-line front ends: argument parsing and output only.

Every command calls one library function; library errors become one line on
stderr and a non-zero exit code.
"""
