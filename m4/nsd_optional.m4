# nsd_optional.m4: nsdedup's optional dependencies.
#
# Nothing here is needed to build or run nsdedup. Each entry is a program
# or library that a part of make check, make fuzz or make bench uses when it
# is there; the tests that need one skip, saying why, when it is not. Every
# entry gets --with-NAME[=PATH] (require it, or name it) and --without-NAME
# (do without it, even when it is installed), so that a machine with
# everything can still build and test the configuration of one that has
# only what the README's set-up command installs (.ci/run does).
#
# The first two arguments of each call, NAME and DEBIAN-PACKAGE, stay on
# the line of the macro's name: .ci/run reads them from configure.ac.

# NSD_OPTIONAL_PROG(NAME, DEBIAN-PACKAGE, VARIABLE, PROGRAM, PURPOSE)
# ------------------------------------------------------------------
# VARIABLE becomes PROGRAM's full path, or empty when it is missing or
# turned off; it is substituted into the Makefiles.
AC_DEFUN([NSD_OPTIONAL_PROG], [
AC_ARG_WITH([$1],
	[AS_HELP_STRING([--without-$1], [do not use $4 for $5 (Debian package $2)])],
	[], [_NSD_WITH([$1])=check])
AS_CASE([$_NSD_WITH([$1])],
	[no], [$3=],
	[yes|check], [AC_PATH_PROG([$3], [$4])],
	[AS_IF([test -x "$_NSD_WITH([$1])"], [$3=$_NSD_WITH([$1])],
		[AC_MSG_ERROR([--with-$1=$_NSD_WITH([$1]): not an executable])])])
AS_IF([test "x$_NSD_WITH([$1])" = xyes && test -z "$$3"],
	[AC_MSG_ERROR([--with-$1: $4 not found; on Debian: apt-get install $2])])
AC_SUBST([$3])
_NSD_OPTIONAL_SUMMARY([$1], [$2], [${$3:-no}])
])

# NSD_OPTIONAL_LIB(NAME, DEBIAN-PACKAGE, PREFIX, PKG-CONFIG-MODULE, PURPOSE)
# -------------------------------------------------------------------------
# PREFIX_CFLAGS and PREFIX_LIBS from pkg-config, and the Automake
# conditional HAVE_PREFIX.
AC_DEFUN([NSD_OPTIONAL_LIB], [
AC_ARG_WITH([$1],
	[AS_HELP_STRING([--without-$1], [do not use $1 as $5 (Debian package $2)])],
	[], [with_$1=check])
nsd_have_$1=no
AS_IF([test "x$with_$1" != xno],
	[PKG_CHECK_MODULES([$3], [$4], [nsd_have_$1=yes], [nsd_have_$1=no])])
AS_IF([test "x$with_$1" = xyes && test "$nsd_have_$1" = no],
	[AC_MSG_ERROR([--with-$1: $4 not found; on Debian: apt-get install $2])])
AM_CONDITIONAL([HAVE_$3], [test "$nsd_have_$1" = yes])
_NSD_OPTIONAL_SUMMARY([$1], [$2], [$nsd_have_$1])
])

# NSD_OPTIONAL_CLIB(NAME, DEBIAN-PACKAGE, PREFIX, HEADER, LIBRARY, FUNCTION,
#     PURPOSE)
# -------------------------------------------------------------------------
# NSD_OPTIONAL_LIB for a library that has no pkg-config module (libbz2):
# found by its header and a function of it; PREFIX_LIBS is -lLIBRARY.
AC_DEFUN([NSD_OPTIONAL_CLIB], [
AC_ARG_WITH([$1],
	[AS_HELP_STRING([--without-$1], [do not use $1 for $7 (Debian package $2)])],
	[], [with_$1=check])
nsd_have_$1=no
$3_CFLAGS=
$3_LIBS=
AS_IF([test "x$with_$1" != xno],
	[AC_CHECK_HEADER([$4],
		[AC_CHECK_LIB([$5], [$6], [nsd_have_$1=yes; $3_LIBS=-l$5])])])
AS_IF([test "x$with_$1" = xyes && test "$nsd_have_$1" = no],
	[AC_MSG_ERROR([--with-$1: lib$5 not found; on Debian: apt-get install $2])])
AC_SUBST([$3_CFLAGS])
AC_SUBST([$3_LIBS])
AM_CONDITIONAL([HAVE_$3], [test "$nsd_have_$1" = yes])
_NSD_OPTIONAL_SUMMARY([$1], [$2], [$nsd_have_$1])
])

# _NSD_WITH(NAME)
# The shell variable of --with-NAME: a dash in NAME becomes an underscore.
AC_DEFUN([_NSD_WITH], [with_[]m4_translit([$1], [-], [_])])

# _NSD_OPTIONAL_SUMMARY(NAME, DEBIAN-PACKAGE, FOUND)
# A line of the table NSD_OPTIONAL_REPORT prints.
AC_DEFUN([_NSD_OPTIONAL_SUMMARY], [
nsd_optional_summary="$nsd_optional_summary
$(printf '  %-12s %-16s %s' "$1" "$2" "$3")"
])

# NSD_OPTIONAL_REPORT
# -------------------
# After AC_OUTPUT: what was found, so that a user sees at once which tests
# will skip.
AC_DEFUN([NSD_OPTIONAL_REPORT], [
printf '\nOptional dependencies (--without-NAME turns one off):\n'
printf '  %-12s %-16s %s' NAME 'DEBIAN PACKAGE' FOUND
printf '%s\n\n' "$nsd_optional_summary"
])
