# Source: https://github.com/dmlc/dgl/issues/745
# Report: a batched-graph GAT trained fine but ran out of GPU memory in validation, each validation forward taking new memory; fixed by disabling gradients during validation
# Shape: evaluate() helper over the validation loader after model.eval(), forward on a fresh batched graph each step, loss/accuracy taken as Python numbers, model.train() at the end
# Expect: TML003 line 51
import dgl
import dgl.function as fn
import torch
import torch.nn.functional as F
from torch import nn


class GraphAttention(nn.Module):
    def __init__(self, in_dim, out_dim, num_heads, feat_drop, alpha):
        super().__init__()
        self.num_heads, self.out_dim = num_heads, out_dim
        self.fc = nn.Linear(in_dim, num_heads * out_dim, bias=False)
        self.feat_drop = nn.Dropout(feat_drop)
        self.attn_l = nn.Parameter(torch.randn(1, num_heads, out_dim) * 0.1)
        self.attn_r = nn.Parameter(torch.randn(1, num_heads, out_dim) * 0.1)
        self.leaky_relu = nn.LeakyReLU(alpha)

    def forward(self, g, h):
        ft = self.fc(self.feat_drop(h)).view(-1, self.num_heads, self.out_dim)
        g.ndata.update({"ft": ft, "el": (ft * self.attn_l).sum(-1, keepdim=True),
                        "er": (ft * self.attn_r).sum(-1, keepdim=True)})
        g.apply_edges(fn.u_add_v("el", "er", "e"))
        g.edata["a"] = dgl.ops.edge_softmax(g, self.leaky_relu(g.edata.pop("e")))
        g.update_all(fn.u_mul_e("ft", "a", "m"), fn.sum("m", "ft"))
        return g.ndata.pop("ft").flatten(1)


class GAT(nn.Module):
    def __init__(self, in_dim, hidden, num_heads, n_classes):
        super().__init__()
        self.layer1 = GraphAttention(in_dim, hidden, num_heads, 0.2, 0.2)
        self.layer2 = GraphAttention(hidden * num_heads, n_classes, 1, 0.2, 0.2)

    def forward(self, g, feats):
        h = F.elu(self.layer1(g, feats))
        h = self.layer2(g, h)
        g.ndata["h"] = h
        return dgl.mean_nodes(g, "h")


def evaluate(model, loss_fcn, val_loader, device):
    model.eval()
    val_loss, correct, count = 0.0, 0, 0
    for bg, labels in val_loader:
        bg = bg.to(device)
        labels = labels.to(device)
        logits = model(bg, bg.ndata["feat"])  # expect: TML003
        loss = loss_fcn(logits, labels)
        val_loss += loss.item() * labels.size(0)
        correct += (logits.argmax(dim=1) == labels).sum().item()
        count += labels.size(0)
    model.train()
    return val_loss / count, correct / count
