# Source: https://github.com/jostmey/NakedAttention/issues/1
# Report: running the script quickly ran out of RAM because `e_train += e_batch/len(loader_train)` built a computational graph that got bigger with every batch of the epoch; adding .detach() kept only one batch's graph alive.
# Shape: fixed variant from the issue: both running averages are still tensors accumulated with `+=` inside the batch loop, but each batch value is `.detach()`-ed first, so no graph links the batches together.
# Expect: near-miss: must be silent
import torch


def fit(model, loader_train, xs_val, ys_val, epochs=128, lr=0.01):
    probability = torch.nn.Softmax(dim=1)
    loss = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    e_better, state_better = float("inf"), None

    for i in range(epochs):
        model.train()
        e_train = 0.0
        a_train = 0.0
        for xs_batch, ys_batch in iter(loader_train):
            ls_batch = model(xs_batch)
            ps_batch = probability(ls_batch)
            e_batch = loss(ls_batch, ys_batch)
            a_batch = (ps_batch * torch.nn.functional.one_hot(ys_batch, 10)).sum(1).mean()
            optimizer.zero_grad()
            e_batch.backward()
            optimizer.step()
            e_train += e_batch.detach() / len(loader_train)
            a_train += a_batch.detach() / len(loader_train)

        model.eval()
        with torch.no_grad():
            ls_val = model(xs_val)
            e_val = loss(ls_val, ys_val)
            if e_val < e_better:
                e_better = e_val
                state_better = {k: v.clone() for k, v in model.state_dict().items()}

        print(f"i: {i}\te_train: {float(e_train) / 0.693:.5f} bits"
              f"\ta_train: {100.0 * float(a_train):.1f} %"
              f"\te_val: {float(e_val) / 0.693:.5f} bits")
    if state_better is not None:
        model.load_state_dict(state_better)
    return model
