# Device: the ops at N = 5000 served only by bundles the JIT wrote.
import torch, quack_mlir
torch.manual_seed(0)
N = 5000
fails = 0
def check(name, got, ref, tol):
    global fails
    got = got.double(); ref = ref.double()
    err = ((got - ref).abs().max() / ref.abs().max().clamp_min(1e-30)).item()
    ok = err < tol and torch.isfinite(got).all().item()
    fails += not ok
    print(f"{name}: rel err {err:.2e} {'ok' if ok else 'FAIL'}")
for dt, tol in ((torch.bfloat16, 2e-2), (torch.float32, 1e-4)):
    for M in (3, 1000):
        x = torch.randn(M, N, device="cuda", dtype=dt, requires_grad=True)
        w = torch.randn(N, device="cuda", dtype=dt, requires_grad=True)
        b = torch.randn(N, device="cuda", dtype=dt, requires_grad=True)
        xd, wd, bd = (t.detach().double().requires_grad_() for t in (x, w, b))
        g = torch.randn(M, N, device="cuda", dtype=dt)
        tag = f"{dt} M={M}"
        y = quack_mlir.rmsnorm(x, w, 1e-6); y.backward(g)
        yr = xd * torch.rsqrt((xd * xd).mean(-1, keepdim=True) + 1e-6) * wd; yr.backward(g.double())
        check("rmsnorm " + tag, y, yr, tol); check("rmsnorm dx " + tag, x.grad, xd.grad, tol); check("rmsnorm dw " + tag, w.grad, wd.grad, tol)
        for t in (x, w, b, xd, wd, bd): t.grad = None
        y = quack_mlir.layer_norm(x, (N,), w, b, 1e-5); y.backward(g)
        yr = torch.nn.functional.layer_norm(xd, (N,), wd, bd, 1e-5); yr.backward(g.double())
        check("layer_norm " + tag, y, yr, tol); check("layer_norm dx " + tag, x.grad, xd.grad, tol); check("layer_norm dw " + tag, w.grad, wd.grad, tol)
        y = quack_mlir.softmax(x.detach()); check("softmax " + tag, y, torch.softmax(xd.detach(), -1), tol)
        lg = x.detach().clone().requires_grad_(); lgd = lg.detach().double().requires_grad_()
        tgt = torch.randint(0, N, (M,), device="cuda"); tgt[0] = -100
        l = quack_mlir.cross_entropy(lg, tgt); l.backward()
        lr = torch.nn.functional.cross_entropy(lgd, tgt); lr.backward()
        check("cross_entropy " + tag, l, lr, tol); check("cross_entropy dlogits " + tag, lg.grad, lgd.grad, tol)
print("failures:", fails)
raise SystemExit(1 if fails else 0)
