//===- Module.cpp - collc.torch._c10d: the backend's Python module ------===//
//
// One function, which collc/torch/_backend.py's creator calls for each
// process group torch.distributed makes on backend "collc". The group's
// join runs without the GIL: the program's store it meets in may be a
// Python object (collc.register_store), whose callbacks take the GIL.
//
//===----------------------------------------------------------------------===//

#include "ProcessGroupCollc.h"

#include <torch/csrc/utils/pybind.h>

#include <pybind11/chrono.h>

PYBIND11_MODULE(_c10d, M) {
  M.doc() = "collc's torch.distributed backend (docs/torch.md, \"The torch.distributed "
            "backend\")";
  M.def(
      "create_process_group",
      [](int Rank, int Size, const std::string &Backend, const std::string &Rendezvous,
         const std::string &Group, std::chrono::milliseconds Timeout) {
        pybind11::gil_scoped_release NoGil;
        return collc::torch::createProcessGroupCollc(Rank, Size, Backend, Rendezvous, Group,
                                                     Timeout);
      },
      pybind11::arg("rank"), pybind11::arg("size"), pybind11::arg("backend"),
      pybind11::arg("rendezvous"), pybind11::arg("group"), pybind11::arg("timeout"),
      "The collc process group of rank `rank` of `size` in collc's group `group` on `backend` "
      "(gloo or mpi), meeting at `rendezvous`, every wait bounded by `timeout`.");
}
