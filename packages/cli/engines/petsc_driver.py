#!/usr/bin/env python3
"""gpusparse's PETSc/SLEPc engine: one linear solve (KSP) or one symmetric eigenproblem (EPS).

Run by `gpusparse solve|eigs|ci --engine petsc|slepc --np N` as
    mpiexec -n N python3 petsc_driver.py job.json [-ksp_... | -eps_... options]
job.json names the PETSc binary inputs (written by gpusparse) and the options mapped from the
command line; extra -ksp_*/-eps_*/-st_*/-pc_* options come after it and override the mapped
ones (they go to PETSc's options database before setFromOptions). Rank 0 writes result.json
(iterations, PETSc's converged reason, timings, eigenvalues and residual norms) and the solution
or eigenvectors as PETSc binary vectors in the job's output folder; gpusparse reads them back.
"""
import json
import sys
import traceback


def main():
    job_path = sys.argv[1]
    extra = sys.argv[2:]
    with open(job_path) as f:
        job = json.load(f)
    import petsc4py

    petsc4py.init([sys.argv[0]] + extra)
    from petsc4py import PETSc

    comm = PETSc.COMM_WORLD
    result = {"np": comm.getSize(), "petsc": ".".join(map(str, PETSc.Sys.getVersion()))}
    try:
        PETSc.Log.begin()
        t0 = PETSc.Log.getTime()
        viewer = PETSc.Viewer().createBinary(job["matrix"], "r", comm=comm)
        A = PETSc.Mat().create(comm=comm)
        A.setType(PETSc.Mat.Type.AIJ)
        A.setFromOptions()
        A.load(viewer)
        viewer.destroy()
        result["loadSeconds"] = PETSc.Log.getTime() - t0
        result["matType"] = A.getType()
        if job["task"] == "solve":
            solve(PETSc, comm, A, job, result)
        else:
            eigs(comm, A, job, result)
        result["matMults"] = PETSc.Log.Event("MatMult").getPerfInfo()["count"]
        result["pcApplies"] = PETSc.Log.Event("PCApply").getPerfInfo()["count"]
        result["ok"] = True
    except Exception as e:  # reported to gpusparse as a result, not as a hang of the other ranks
        result["ok"] = False
        result["error"] = f"{type(e).__name__}: {e}"
        result["trace"] = traceback.format_exc()
    if comm.getRank() == 0:
        with open(job["out"] + "/result.json", "w") as f:
            json.dump(result, f)
    return 0 if result["ok"] else 3


def reason_name(enum_class, code):
    for name in dir(enum_class):
        if not name.startswith("_") and getattr(enum_class, name) == code:
            return name
    return str(code)


def solve(PETSc, comm, A, job, result):
    o = job["ksp"]
    # vectors of the matrix's kind (CUDA vectors for -mat_type aijcusparse) and layout
    x, b = A.createVecs()
    viewer = PETSc.Viewer().createBinary(job["rhs"], "r", comm=comm)
    b.load(viewer)
    viewer.destroy()
    ksp = PETSc.KSP().create(comm=comm)
    ksp.setOperators(A)
    ksp.setType(o["type"])
    if o["type"] == "gmres":
        ksp.setGMRESRestart(o["restart"])
    pc = ksp.getPC()
    try:
        pc.setType(o["pc"])
    except PETSc.Error as e:
        raise RuntimeError(f"--pc {o['pc']}: this PETSc build does not have it (hypre needs a PETSc configured with hypre, as Debian's is); --pc gamg is always there") from e
    if o["pc"] == "hypre":
        pc.setHYPREType("boomeramg")
    # gpusparse's rule, ‖b − A x‖ ≤ max(rtol·‖b‖, atol): the unpreconditioned residual, which
    # GMRES and BiCGStab monitor with the preconditioner on the right
    if o["type"] in ("gmres", "bcgs"):
        ksp.setPCSide(PETSc.PC.Side.RIGHT)
    ksp.setNormType(PETSc.KSP.NormType.UNPRECONDITIONED)
    ksp.setTolerances(rtol=o["rtol"], atol=o["atol"], max_it=o["maxit"])
    history = []
    ksp.setMonitor(lambda _k, it, rnorm: history.append([it, rnorm]))
    ksp.setFromOptions()
    t0 = PETSc.Log.getTime()
    ksp.solve(b, x)
    result["solveSeconds"] = PETSc.Log.getTime() - t0
    code = ksp.getConvergedReason()
    result.update(
        iterations=ksp.getIterationNumber(),
        reasonCode=int(code),
        reason=reason_name(PETSc.KSP.ConvergedReason, code),
        residualNorm=ksp.getResidualNorm(),
        kspType=ksp.getType(),
        pcType=pc.getType(),
        normType=reason_name(PETSc.KSP.NormType, ksp.getNormType()),
        history=history,
    )
    out = PETSc.Viewer().createBinary(job["out"] + "/x.petsc", "w", comm=comm)
    x.view(out)
    out.destroy()


def eigs(comm, A, job, result):
    import slepc4py

    slepc4py.init(sys.argv[:1])
    from petsc4py import PETSc
    from slepc4py import SLEPc

    o = job["eps"]
    A.setOption(PETSc.Mat.Option.SYMMETRIC, True)
    eps = SLEPc.EPS().create(comm=comm)
    eps.setOperators(A)
    eps.setProblemType(SLEPc.EPS.ProblemType.HEP)
    eps.setType(o["type"])
    which = SLEPc.EPS.Which.SMALLEST_REAL if o["which"] == "smallest" else SLEPc.EPS.Which.LARGEST_REAL
    eps.setWhichEigenpairs(which)
    eps.setDimensions(nev=o["nev"])
    # gpusparse's rule ‖A v − λ v‖ ≤ tol·‖A‖ is SLEPc's NORM test; the CI driver's absolute
    # residual (in Eh) is ABS
    eps.setConvergenceTest(SLEPc.EPS.Conv.ABS if o.get("conv") == "abs" else SLEPc.EPS.Conv.NORM)
    result["normInf"] = A.norm(PETSc.NormType.INFINITY)
    if o.get("shiftInvert"):
        # the smallest eigenvalues of an SPD matrix: Krylov–Schur on (A − 0·I)⁻¹ with a direct
        # factorisation (MUMPS in parallel, PETSc's own on one process)
        st = eps.getST()
        st.setType(SLEPc.ST.Type.SINVERT)
        eps.setTarget(0.0)
        eps.setWhichEigenpairs(SLEPc.EPS.Which.TARGET_MAGNITUDE)
        st.getKSP().setType(PETSc.KSP.Type.PREONLY)
        st.getKSP().getPC().setType(PETSc.PC.Type.CHOLESKY)
        if comm.getSize() > 1:
            st.getKSP().getPC().setFactorSolverType("mumps")
    eps.setTolerances(tol=o["tol"], max_it=o["maxit"])
    if o["type"] in ("gd", "jd"):
        # Davidson's correction with the diagonal preconditioner (Jacobi), as the built-in one
        # (Jacobi–Davidson solves its correction equation with the ST's Krylov solver: keep it)
        # one correction vector per wanted pair and iteration, as the built-in Davidson
        if o["type"] == "gd":
            eps.setGDBlockSize(o["nev"])
        else:
            eps.setJDBlockSize(o["nev"])
        st = eps.getST()
        st.setType(SLEPc.ST.Type.PRECOND)
        if o.get("shift") is not None:
            # (D − τ)⁻¹ with τ near the wanted eigenvalues: SLEPc keeps the shift fixed where the
            # built-in Davidson uses the current Ritz value (with τ = 0, CI converged 30× slower)
            st.setShift(o["shift"])
        if o["type"] == "gd":
            st.getKSP().setType(PETSc.KSP.Type.PREONLY)
        st.getKSP().getPC().setType(PETSc.PC.Type.JACOBI)
    history = []
    eps.setMonitor(lambda _e, it, nconv, eig, err: history.append([it, int(nconv), [float(z.real) for z in eig[: o["nev"]]], [float(r) for r in err[: o["nev"]]]]))
    eps.setFromOptions()
    t0 = PETSc.Log.getTime()
    eps.solve()
    result["solveSeconds"] = PETSc.Log.getTime() - t0
    nconv = eps.getConverged()
    code = eps.getConvergedReason()
    take = min(nconv, o["nev"])
    values, residuals = [], []
    vr = A.createVecRight()
    out = PETSc.Viewer().createBinary(job["out"] + "/vectors.petsc", "w", comm=comm)
    for i in range(take):
        lam = eps.getEigenpair(i, vr)
        values.append(float(lam.real))
        residuals.append(float(eps.computeError(i, SLEPc.EPS.ErrorType.ABSOLUTE)))
        if o["vectors"]:
            vr.view(out)
    out.destroy()
    result.update(
        iterations=eps.getIterationNumber(),
        reasonCode=int(code),
        reason=reason_name(SLEPc.EPS.ConvergedReason, code),
        converged=nconv,
        values=values,
        residualNorms=residuals,
        epsType=eps.getType(),
        stType=eps.getST().getType(),
        slepc=".".join(map(str, SLEPc.Sys.getVersion())),
        history=history,
    )


if __name__ == "__main__":
    sys.exit(main())
