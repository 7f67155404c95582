#!/bin/sh
# pseudo_hosts.sh PER_HOST CMD ARGS...
#
# Runs CMD on pseudo-host h<rank / PER_HOST>: sets COLLC_PSEUDO_HOST
# (runtime/shm/HostIdentity.h) from the launcher's rank (mpirun's
# OMPI_COMM_WORLD_RANK, srun's SLURM_PROCID, or RANK as spawn_ranks.py and
# torchrun set it), so that one machine runs a multi-host job: 4 processes
# with PER_HOST 2 are 2 hosts x 2 processes, sharing memory within each.
per=$1
shift
rank=${OMPI_COMM_WORLD_RANK:-${SLURM_PROCID:-${RANK:?pseudo_hosts.sh: no rank in the environment}}}
COLLC_PSEUDO_HOST=h$((rank / per)) exec "$@"
