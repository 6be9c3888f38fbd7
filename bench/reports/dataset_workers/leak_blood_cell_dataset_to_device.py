# Source: https://github.com/EggMuratov/Blood_Cells_Segmentation/blob/5dc6b44110a18f7d212d945b05436f18430a23e2/Dataset/DataSet.py
# Report: audit of a blood-cell U-Net project: the segmentation Dataset moves each transformed image and mask to the CUDA device inside __getitem__, so any DataLoader with worker processes has to initialise CUDA in a forked worker
# Shape: path-list Dataset with image / mask transforms; __getitem__ thresholds the mask and calls .to(device) on both tensors before returning them to a multi-worker DataLoader
# Expect: TML010 line 25; TML010 line 30
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
            img = img.to(device)  # expect: TML010
        if self.transform_mask:
            mask = self.transform_mask(mask)
            mask[mask < 200] = 0
            mask[mask > 200] = 1
            mask = mask.to(device)  # expect: TML010
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
    train_loader = data.DataLoader(d_train, batch_size=4, shuffle=True, num_workers=num_workers)
    test_loader = data.DataLoader(d_test, batch_size=1, shuffle=False, num_workers=num_workers)
    return train_loader, test_loader


def train(model, train_loader, epochs=10, lr=1e-3):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    history = []
    for epoch in range(epochs):
        model.train()
        epoch_loss = 0.0
        for images, masks in train_loader:
            optimizer.zero_grad()
            loss = dice_loss(model(images), masks)
            loss.backward()
            optimizer.step()
            epoch_loss += loss.item()
        history.append(epoch_loss / len(train_loader))
        print(f"epoch {epoch + 1}: dice loss {history[-1]:.4f}")
    return history
