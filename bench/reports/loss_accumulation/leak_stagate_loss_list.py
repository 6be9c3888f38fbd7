# Source: https://github.com/RucDongLab/STAGATE_pyG/pull/6
# Report: train_STAGATE kept every epoch's loss tensor in loss_list, so memory exploded during training; the PR removed the unused loss_list
# Shape: loss_list.append(loss) keeps each epoch's mse_loss (a 0-dim view of the full spots x genes storage plus its grad_fn) for all n_epochs; the final embedding pass after eval() runs with grad on
# Expect: TML001 line 24; TML003 line 30
import torch
import torch.nn.functional as F
from tqdm import tqdm


def train_STAGATE(adata, data, model_cls, hidden_dims=(512, 30), n_epochs=1000,
                  lr=0.001, key_added="STAGATE", gradient_clipping=5.0,
                  weight_decay=0.0001, verbose=True, save_loss=False,
                  device=torch.device("cuda" if torch.cuda.is_available() else "cpu")):
    model = model_cls(hidden_dims=[data.x.shape[1]] + list(hidden_dims)).to(device)
    data = data.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)

    loss_list = []
    for epoch in tqdm(range(1, n_epochs + 1), disable=not verbose):
        model.train()
        optimizer.zero_grad()
        z, out = model(data.x, data.edge_index)
        loss = F.mse_loss(data.x, out)
        loss_list.append(loss)  # expect: TML001
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), gradient_clipping)
        optimizer.step()

    model.eval()
    z, out = model(data.x, data.edge_index)  # expect: TML003

    adata.obsm[key_added] = z.to("cpu").detach().numpy()
    if save_loss:
        adata.uns["STAGATE_loss"] = loss_list
    return adata
