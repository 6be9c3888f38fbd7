# Source: https://github.com/somepago/saint/blob/0a836b79479246d81ea14014bb2eb13f63d6113e/utils.py
# Report: SAINT (tabular transformer) scores a validation/test loader by growing GPU tensors y_test / y_pred / prob with torch.cat on every batch (the repository's code)
# Shape: y_test = torch.cat([y_test, batch]) inside the loop copies the whole accumulator each batch (quadratic copying, peak twice the accumulator); no_grad keeps it graph-free
# Expect: TML008 lines 50, 51, 53
import torch
import torch.nn as nn
from sklearn.metrics import roc_auc_score


def embed_data_mask(x_categ, x_cont, cat_mask, con_mask, model):
    x_categ = x_categ + model.categories_offset.type_as(x_categ)
    x_categ_enc = model.embeds(x_categ)
    x_cont_enc = torch.stack([mlp(x_cont[:, i:i + 1]) for i, mlp in enumerate(model.simple_MLP)], dim=1)
    cat_mask_temp = model.mask_embeds_cat(cat_mask + model.cat_mask_offset.type_as(cat_mask))
    con_mask_temp = model.mask_embeds_cont(con_mask + model.con_mask_offset.type_as(con_mask))
    x_categ_enc[cat_mask == 0] = cat_mask_temp[cat_mask == 0]
    x_cont_enc[con_mask == 0] = con_mask_temp[con_mask == 0]
    return x_categ, x_categ_enc, x_cont_enc


def train_epoch(model, loader, optimizer, criterion, device):
    model.train()
    running_loss = 0.0
    for data in loader:
        optimizer.zero_grad()
        x_categ, x_cont, y_gts, cat_mask, con_mask = [d.to(device) for d in data]
        _, x_categ_enc, x_cont_enc = embed_data_mask(x_categ, x_cont, cat_mask, con_mask, model)
        reps = model.transformer(x_categ_enc, x_cont_enc)
        y_outs = model.mlpfory(reps[:, 0, :])
        loss = criterion(y_outs, y_gts.squeeze())
        loss.backward()
        optimizer.step()
        running_loss += loss.item()
    return running_loss


def classification_scores(model, dloader, device, task):
    model.eval()
    m = nn.Softmax(dim=1)
    y_test = torch.empty(0).to(device)
    y_pred = torch.empty(0).to(device)
    prob = torch.empty(0).to(device)
    with torch.no_grad():
        for data in dloader:
            x_categ, x_cont, y_gts, cat_mask, con_mask = [d.to(device) for d in data]
            _, x_categ_enc, x_cont_enc = embed_data_mask(x_categ, x_cont, cat_mask, con_mask, model)
            reps = model.transformer(x_categ_enc, x_cont_enc)
            y_reps = reps[:, 0, :]
            y_outs = model.mlpfory(y_reps)
            y_test = torch.cat([y_test, y_gts.squeeze().float()], dim=0)  # expect: TML008
            y_pred = torch.cat([y_pred, torch.argmax(y_outs, dim=1).float()], dim=0)  # expect: TML008
            if task == 'binary':
                prob = torch.cat([prob, m(y_outs)[:, -1].float()], dim=0)  # expect: TML008
    acc = (y_pred == y_test).sum().float() / y_test.shape[0] * 100
    auc = 0
    if task == 'binary':
        auc = roc_auc_score(y_score=prob.cpu(), y_true=y_test.cpu())
    return acc.cpu().numpy(), auc


def fit(model, trainloader, validloader, optimizer, criterion, device, epochs, task):
    best_valid_auroc = 0
    for epoch in range(epochs):
        train_epoch(model, trainloader, optimizer, criterion, device)
        if epoch % 5 == 0:
            model.eval()
            with torch.no_grad():
                accuracy, auroc = classification_scores(model, validloader, device, task)
            if auroc > best_valid_auroc:
                best_valid_auroc = auroc
                torch.save(model.state_dict(), 'bestmodel.pth')
            model.train()
    return best_valid_auroc
