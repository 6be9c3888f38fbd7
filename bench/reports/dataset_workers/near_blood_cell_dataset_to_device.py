# Source: https://github.com/EggMuratov/Blood_Cells_Segmentation/blob/5dc6b44110a18f7d212d945b05436f18430a23e2/Dataset/DataSet.py
# Report: audit of a blood-cell U-Net project whose segmentation Dataset calls .to(device) inside __getitem__; rewritten as the repository's own later dataset does it: CPU tensors from the workers, the loop moves them
# Shape: same Dataset and transforms; __getitem__ returns host tensors, the DataLoader pins them and the training loop copies each batch with .to(device, non_blocking=True)
# Expect: near-miss: must be silent
import cv2
import torch
import torch.utils.data as data
import torchvision.transforms.v2 as tfs_v2

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class CellDataSet(data.Dataset):
    def __init__(self, img_prefix, mask_prefix, num_img, transform_img=None, transform_mask=None):
        self.transform_img = transform_img
        self.transform_mask = transform_mask
        self.images = [f"{img_prefix}{i}.jpg" for i in range(1, num_img)]
        self.masks = [f"{mask_prefix}{i}.jpg" for i in range(1, num_img)]

    def __getitem__(self, item):
        img = cv2.imread(self.images[item])
        mask = cv2.imread(self.masks[item], cv2.IMREAD_GRAYSCALE)
        if self.transform_img:
            img = self.transform_img(img)
        if self.transform_mask:
            mask = self.transform_mask(mask)
            mask[mask < 200] = 0
            mask[mask > 200] = 1
        return img, mask

    def __len__(self):
        return len(self.images)


def dice_loss(pred, target, smooth=1e-6):
    pred = torch.sigmoid(pred).view(-1)
    target = target.view(-1)
    intersection = (pred * target).sum()
    return 1 - (2.0 * intersection + smooth) / (pred.sum() + target.sum() + smooth)


def make_loaders(train_prefixes, test_prefixes, n_train, n_test, num_workers=4):
    tr_img = tfs_v2.Compose([tfs_v2.ToImage(), tfs_v2.ToDtype(torch.float32, scale=True)])
    tr_mask = tfs_v2.Compose([tfs_v2.ToImage(), tfs_v2.ToDtype(torch.float32)])
    d_train = CellDataSet(*train_prefixes, n_train, transform_img=tr_img, transform_mask=tr_mask)
    d_test = CellDataSet(*test_prefixes, n_test, transform_img=tr_img, transform_mask=tr_mask)
    train_loader = data.DataLoader(d_train, batch_size=4, shuffle=True, num_workers=num_workers,
                                   pin_memory=True)
    test_loader = data.DataLoader(d_test, batch_size=1, shuffle=False, num_workers=num_workers,
                                  pin_memory=True)
    return train_loader, test_loader


def train(model, train_loader, epochs=10, lr=1e-3):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    history = []
    for epoch in range(epochs):
        model.train()
        epoch_loss = 0.0
        for images, masks in train_loader:
            images = images.to(device, non_blocking=True)
            masks = masks.to(device, non_blocking=True)
            optimizer.zero_grad()
            loss = dice_loss(model(images), masks)
            loss.backward()
            optimizer.step()
            epoch_loss += loss.item()
        history.append(epoch_loss / len(train_loader))
        print(f"epoch {epoch + 1}: dice loss {history[-1]:.4f}")
    return history
