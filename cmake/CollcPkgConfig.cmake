# Writes collc.pc for an install whose libraries go to LIBDIR and headers to
# INCLUDEDIR (GNUInstallDirs' CMAKE_INSTALL_LIBDIR/INCLUDEDIR: "lib",
# "lib64", "lib/x86_64-linux-gnu", or absolute paths). Relative ones are
# reached from the .pc's own directory (${pcfiledir}), so a prefix can be
# moved after install; absolute ones are written as they are.
#   include(): collc_write_pc(OUT LIBDIR INCLUDEDIR VERSION)
#   script:    cmake -DOUT=... -DLIBDIR=... -DINCLUDEDIR=... -DVERSION=... -P CollcPkgConfig.cmake
#              (tests/install/check_install.sh checks a multiarch LIBDIR so)
set(COLLC_PC_TEMPLATE ${CMAKE_CURRENT_LIST_DIR}/../api/collc.pc.in)

function(collc_write_pc out libdir includedir version)
  if(IS_ABSOLUTE "${libdir}")
    set(COLLC_PC_PREFIX "")
    set(COLLC_PC_LIBDIR "${libdir}")
  else()
    # From LIBDIR/pkgconfig back up to the prefix: one ".." per component.
    file(RELATIVE_PATH up "/p/${libdir}/pkgconfig" "/p")
    set(COLLC_PC_PREFIX "\${pcfiledir}/${up}")
    set(COLLC_PC_LIBDIR "\${prefix}/${libdir}")
  endif()
  if(IS_ABSOLUTE "${includedir}")
    set(COLLC_PC_INCLUDEDIR "${includedir}")
  else()
    set(COLLC_PC_INCLUDEDIR "\${prefix}/${includedir}")
  endif()
  set(PROJECT_VERSION "${version}")
  configure_file(${COLLC_PC_TEMPLATE} ${out} @ONLY)
endfunction()

if(CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE)
  collc_write_pc("${OUT}" "${LIBDIR}" "${INCLUDEDIR}" "${VERSION}")
endif()
