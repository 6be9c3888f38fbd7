# Source: https://github.com/hcw-00/PatchCore_anomaly_detection/blob/main/train.py
# Report: one edit away from the repository: hook registration is moved into forward() next to init_features() (a common restructuring), so every training_step adds two more hooks to the persistent backbone
# Shape: forward of an nn.Module (LightningModule) runs once per step; register_forward_hook on self.model.layer2[-1]/layer3[-1] with the handle discarded piles up closures, and each forward appends 2*N hooked outputs to self.features
# Expect: TML007 lines 52, 53
import numpy as np
import pytorch_lightning as pl
import torch
import torch.nn.functional as F
import torchvision


def embedding_concat(x, y):
    B, C1, H1, W1 = x.size()
    _, C2, H2, W2 = y.size()
    s = int(H1 / H2)
    x = F.unfold(x, kernel_size=s, dilation=1, stride=s).view(B, C1, -1, H2, W2)
    z = torch.zeros(B, C1 + C2, x.size(2), H2, W2)
    for i in range(x.size(2)):
        z[:, :, i, :, :] = torch.cat((x[:, :, i, :, :], y), 1)
    z = z.view(B, -1, H2 * W2)
    return F.fold(z, kernel_size=s, output_size=(H1, W1), stride=s)


def reshape_embedding(embedding):
    out = []
    for k in range(embedding.shape[0]):
        for i in range(embedding.shape[2]):
            for j in range(embedding.shape[3]):
                out.append(embedding[k, :, i, j])
    return out


class PatchCore(pl.LightningModule):
    def __init__(self, hparams):
        super().__init__()
        self.save_hyperparameters(hparams)
        self.init_features()
        self.model = torchvision.models.wide_resnet50_2(pretrained=True)
        for param in self.model.parameters():
            param.requires_grad = False

        self.embedding_list = []

    def init_features(self):
        self.features = []

    def hook_t(self, module, input, output):
        self.features.append(output)

    def forward(self, x_t):
        self.init_features()
        self.model.layer2[-1].register_forward_hook(self.hook_t)  # expect: TML007
        self.model.layer3[-1].register_forward_hook(self.hook_t)  # expect: TML007
        _ = self.model(x_t)
        return self.features

    def configure_optimizers(self):
        return None

    def on_train_start(self):
        self.model.eval()
        self.embedding_list = []

    def training_step(self, batch, batch_idx):
        x, _, _, file_name, _ = batch
        features = self(x)
        embeddings = []
        for feature in features:
            m = torch.nn.AvgPool2d(3, 1, 1)
            embeddings.append(m(feature))
        embedding = embedding_concat(embeddings[0], embeddings[1])
        self.embedding_list.extend(reshape_embedding(np.array(embedding)))

    def training_epoch_end(self, outputs):
        total_embeddings = np.array(self.embedding_list)
        self.embedding_coreset = total_embeddings[:: max(1, int(1 / self.hparams.coreset_sampling_ratio))]
