# Source: https://github.com/jostmey/NakedAttention/issues/1
# Report: running the script quickly ran out of RAM because `e_train += e_batch/len(loader_train)` built a computational graph that got bigger with every batch of the epoch; adding .detach() kept only one batch's graph alive.
# Shape: the per-epoch average loss is accumulated from the graph-carrying batch loss, chaining every batch's graph until the epoch ends; the accuracy average is built from an argmax comparison and carries no graph.
# Expect: TML001 line 28
import torch


def batch_accuracy(logits, targets):
    return (logits.argmax(dim=1) == targets).float().mean()


def fit(model, loader_train, xs_val, ys_val, epochs=128, lr=0.01):
    loss = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    e_better, state_better = float("inf"), {}

    for i in range(epochs):
        model.train()
        e_train = 0.0
        a_train = 0.0
        for xs_batch, ys_batch in iter(loader_train):
            ls_batch = model(xs_batch)
            e_batch = loss(ls_batch, ys_batch)
            a_batch = batch_accuracy(ls_batch, ys_batch)
            optimizer.zero_grad()
            e_batch.backward()
            optimizer.step()
            e_train += e_batch / len(loader_train)  # expect: TML001
            a_train += a_batch / len(loader_train)

        model.eval()
        with torch.no_grad():
            ls_val = model(xs_val)
            e_val = loss(ls_val, ys_val)
            a_val = batch_accuracy(ls_val, ys_val)
            if e_val < e_better:
                e_better = e_val
                state_better = model.state_dict()

        print(f"i: {i}\te_train: {float(e_train) / 0.693:.5f} bits"
              f"\ta_train: {100.0 * float(a_train):.1f} %"
              f"\te_val: {float(e_val) / 0.693:.5f} bits\ta_val: {100.0 * float(a_val):.1f} %")
    model.load_state_dict(state_better)
    return model
