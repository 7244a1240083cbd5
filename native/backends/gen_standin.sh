#!/bin/sh
# gen_standin.sh CLASS HEADER: prints a C++ class CLASS##Defaults that
# implements every pure virtual method of nvinfer1::apiv::CLASS, as declared
# in HEADER (TensorRT's NvInferImpl.h), with a harmless default: bool
# setters report success, other values are zero. Tests derive from it and
# override the calls they record, so a stand-in for TensorRT's
# implementation tables follows the real headers of each version
# (settings_test.cc, backends.mk).
set -eu
class=$1
header=$2
echo "class ${class}Defaults : public nvinfer1::apiv::${class} {"
echo " public:"
# Declarations may span lines: join each from "virtual" to its ";". The
# TensorRT-RTX and 11.x headers mark some TRT_NODISCARD or TRT_DEPRECATED,
# which the stand-in drops.
sed -n "/^class ${class} /,/^};/p" "$header" |
  awk '/virtual / { decl = "" } decl != "-" { gsub(/^[ \t]+/, ""); decl = decl (decl == "" ? "" : " ") $0 }
       decl != "-" && /;/ { if (decl ~ /virtual .*= 0;/) print decl; decl = "-" }
       BEGIN { decl = "-" }' |
  sed -E 's/^[[:space:]]*((TRT_NODISCARD|TRT_DEPRECATED) )*virtual (.*[ *&])([A-Za-z0-9_]+)\((.*)\)( const)? noexcept = 0;/  \3\4(\5)\6 noexcept override { return tamtest::Default<\3>::get(); }/'
echo "};"
